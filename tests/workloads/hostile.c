/* hostile - a program whose names hold what no text should: a profiler
 * reads its target's names (symbols, thread names, arguments) and must
 * write every output valid for its reader whatever they hold.
 *
 *   main thread:  main -> "esc\e]0;X\a;title"   (a terminal's escape, which
 *                                                would set a terminal's title)
 *                 main -> "bad\xffutf\r;x 12"     (not UTF-8, a carriage
 *                                                return, a space and digits)
 *                 main -> "cafe_\u00e9\u20ac"     (UTF-8: kept as it is)
 *   worker thread, named "t\e[31m\xff" (with an escape and a byte that is
 *   not UTF-8): "R...R" (a 700-byte name, of 'R's then three-byte
 *   characters) recursing 100 deep, then hostile_leaf: a stack of 70 KB of
 *   names.
 *
 * The names are symbols of assembly (gcc passes the bytes of a quoted
 * name through), spinning routines with CFI. Usage: hostile SECONDS. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#define ESC "\"esc\033]0;X\007;title\""
#define BAD "\"bad\377utf\r;x 12\""
#define UTF "\"cafe_\303\251\342\202\254\""
#define R10 "RRRRRRRRRR"
#define E10 "\342\202\254\342\202\254\342\202\254\342\202\254\342\202\254" \
            "\342\202\254\342\202\254\342\202\254\342\202\254\342\202\254"
/* 550 'R's, then 50 euro signs (150 bytes): cut at 599 bytes, inside one */
#define LONG "\"" R10 R10 R10 R10 R10 R10 R10 R10 R10 R10 R10 R10 R10 R10 R10 R10 R10 R10 \
             R10 R10 R10 R10 R10 R10 R10 R10 R10 R10 R10 R10 R10 R10 R10 R10 R10 R10 R10 \
             R10 R10 R10 R10 R10 R10 R10 R10 R10 R10 R10 R10 R10 R10 R10 R10 R10 R10 \
             E10 E10 E10 E10 E10 "\""

/* spin(n): count rdi down. */
#define SPIN(name)                                                                 \
    ".globl " name "\n.type " name ", @function\n" name ":\n.cfi_startproc\n"        \
    "1: dec %rdi\n jnz 1b\n ret\n.cfi_endproc\n.size " name ", .-" name "\n"

__asm__(".text\n" SPIN(ESC) SPIN(BAD) SPIN(UTF)
        /* long(depth in rdi, spin in rsi): recurse depth times, then
         * hostile_leaf(spin). */
        ".globl " LONG "\n.type " LONG ", @function\n" LONG ":\n.cfi_startproc\n"
        " sub $8, %rsp\n.cfi_adjust_cfa_offset 8\n"
        " dec %rdi\n jz 2f\n call " LONG "\n jmp 3f\n"
        "2: mov %rsi, %rdi\n call hostile_leaf\n"
        "3: add $8, %rsp\n.cfi_adjust_cfa_offset -8\n ret\n.cfi_endproc\n"
        ".size " LONG ", .-" LONG "\n"
        ".section .data.rel.ro,\"aw\"\n.balign 8\n.globl hostile_fns\nhostile_fns:\n"
        ".quad " ESC ", " BAD ", " UTF ", " LONG "\n.text\n");

extern void (*const hostile_fns[4])(long, long);
static volatile unsigned long sink;
static double seconds;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void hostile_leaf(long n)
{
    for (long i = 0; i < n; i++)
        sink += (unsigned long)i;
}

static void *worker(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "t\033[31m\377");
    double end = now() + seconds;
    while (now() < end)
        hostile_fns[3](100, 200000);
    return NULL;
}

int main(int argc, char **argv)
{
    pthread_t t;
    seconds = argc > 1 ? atof(argv[1]) : 2.0;
    pthread_create(&t, NULL, worker, NULL);
    double end = now() + seconds;
    while (now() < end)
        for (int i = 0; i < 3; i++)
            hostile_fns[i](300000, 0);
    pthread_join(t, NULL);
    return 0;
}
