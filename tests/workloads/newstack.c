/* newstack: a thread that leaves its stack for a new one, as the child of
 * clone3 starts on its own, and blocks there in nanosleep, 100 ms at a
 * time, at a `syscall` followed by `test %rax,%rax`, as the child's first
 * instruction is, in code without unwind information: nothing above its
 * stack pointer is a frame (the new stack holds small numbers, as the
 * child's holds its start arguments). The main thread waits for SECONDS.
 * Usage: newstack SECONDS */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

void newstack_sleep(uint64_t *top, const struct timespec *ts);
__asm__(".text\n"
        ".globl newstack_sleep\n"
        ".type newstack_sleep,@function\n"
        "newstack_sleep:\n"
        "    mov %rdi, %rsp\n"
        "    mov %rsi, %r12\n"
        "1:  mov $35, %eax\n" /* nanosleep(ts, NULL) */
        "    mov %r12, %rdi\n"
        "    xor %esi, %esi\n"
        "    syscall\n"
        "    test %rax, %rax\n"
        "    jmp 1b\n"
        ".size newstack_sleep, .-newstack_sleep\n");

static uint64_t stack[2048];
static const struct timespec nap = {0, 100000000};

static void *run(void *arg)
{
    (void)arg;
    for (size_t i = 0; i < sizeof stack / sizeof *stack; i++)
        stack[i] = i % 4;
    newstack_sleep(stack + sizeof stack / sizeof *stack - 8, &nap);
    return NULL;
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 2;
    pthread_t t;
    if (pthread_create(&t, NULL, run, NULL) != 0)
        return 1;
    printf("ready\n");
    fflush(stdout);
    struct timespec ts = {(time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9)};
    nanosleep(&ts, NULL);
    return 0;
}
