/* unit.h - a tiny test harness for hsspy's unit tests.
 *
 * Each unit test binary registers cases with TEST(name) and runs them from
 * main() with UNIT_MAIN().  Every case prints exactly one line the test runner
 * (tests/run.sh) counts:  "PASS: <file>: <case>", "FAIL: <file>: <case>: why"
 * or, for a case this machine cannot run, "SKIP: <file>: <case>: why".
 * A failed CHECK ends its case (not the binary), so one broken case does not
 * hide the others.
 */
#ifndef HSSPY_TESTS_UNIT_H
#define HSSPY_TESTS_UNIT_H

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

struct unit_case {
    const char *name;
    void (*fn)(void);
};

#define UNIT_MAX_CASES 256
extern struct unit_case unit__cases[UNIT_MAX_CASES];
extern int unit__ncases;
extern jmp_buf unit__jmp;
extern char unit__why[512];

#define TEST(name)                                                        \
    static void test_##name(void);                                        \
    __attribute__((constructor)) static void register_##name(void)        \
    {                                                                     \
        if (unit__ncases < UNIT_MAX_CASES)                                \
            unit__cases[unit__ncases++] = (struct unit_case){#name,       \
                                                             test_##name}; \
    }                                                                     \
    static void test_##name(void)

#define UNIT_FAIL(...)                                                    \
    do {                                                                  \
        int n_ = snprintf(unit__why, sizeof unit__why, "%s:%d: ",         \
                          __FILE__, __LINE__);                            \
        if (n_ > 0 && (size_t)n_ < sizeof unit__why)                      \
            snprintf(unit__why + n_, sizeof unit__why - (size_t)n_,       \
                     __VA_ARGS__);                                        \
        longjmp(unit__jmp, 1);                                            \
    } while (0)

/* End the case as skipped, saying why (what this machine does not allow). */
#define UNIT_SKIP(...)                                                    \
    do {                                                                  \
        snprintf(unit__why, sizeof unit__why, __VA_ARGS__);               \
        longjmp(unit__jmp, 2);                                            \
    } while (0)

#define CHECK(cond)                                                       \
    do {                                                                  \
        if (!(cond))                                                      \
            UNIT_FAIL("check failed: %s", #cond);                         \
    } while (0)

#define CHECK_EQ_INT(a, b)                                                \
    do {                                                                  \
        long long a_ = (long long)(a), b_ = (long long)(b);               \
        if (a_ != b_)                                                     \
            UNIT_FAIL("%s == %lld, expected %s == %lld", #a, a_, #b, b_); \
    } while (0)

#define CHECK_EQ_STR(a, b)                                                \
    do {                                                                  \
        const char *a_ = (a), *b_ = (b);                                  \
        if (!a_ || !b_ || strcmp(a_, b_) != 0)                            \
            UNIT_FAIL("%s is \"%.200s\", expected \"%.200s\"", #a,        \
                      a_ ? a_ : "(null)", b_ ? b_ : "(null)");            \
    } while (0)

/* Define the harness state and main() in exactly one translation unit. */
#define UNIT_MAIN()                                                       \
    struct unit_case unit__cases[UNIT_MAX_CASES];                         \
    int unit__ncases;                                                     \
    jmp_buf unit__jmp;                                                    \
    char unit__why[512];                                                  \
    int main(int argc, char **argv)                                       \
    {                                                                     \
        const char *file = strrchr(__FILE__, '/');                        \
        volatile int failed = 0;                                                 \
        file = file ? file + 1 : __FILE__;                                \
        for (volatile int i = 0; i < unit__ncases; i++) {                    \
            if (argc > 1 && strcmp(argv[1], unit__cases[i].name) != 0)    \
                continue;                                                 \
            unit__why[0] = 0;                                             \
            int how_ = setjmp(unit__jmp);                                 \
            if (how_ == 0) {                                              \
                unit__cases[i].fn();                                      \
                printf("PASS: %s: %s\n", file, unit__cases[i].name);      \
            } else if (how_ == 2) {                                       \
                printf("SKIP: %s: %s: %s\n", file, unit__cases[i].name,   \
                       unit__why);                                        \
            } else {                                                      \
                printf("FAIL: %s: %s: %s\n", file, unit__cases[i].name,   \
                       unit__why);                                        \
                failed++;                                                 \
            }                                                             \
            fflush(stdout);                                               \
        }                                                                 \
        return failed ? 1 : 0;                                            \
    }

/* Fork a child that runs body(fd), which never returns, and wait for the
 * first byte it writes to fd: it is ready. Its pid, or -1. */
static inline pid_t unit_spawn_ready(void (*body)(int ready_fd))
{
    int ready[2];
    char c;
    if (pipe(ready) != 0)
        return -1;
    pid_t child = fork();
    if (child == 0) {
        close(ready[0]);
        body(ready[1]);
        _exit(1);
    }
    close(ready[1]);
    ssize_t got = child > 0 ? read(ready[0], &c, 1) : -1;
    close(ready[0]);
    if (child > 0 && got != 1) {
        kill(child, SIGKILL);
        waitpid(child, NULL, 0);
        return -1;
    }
    return child;
}

#endif
