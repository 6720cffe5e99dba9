/* symtest - functions at known addresses for tests/unit/test_symbols.c,
 * which expects symtest_alpha on line 6. Built both PIE and non-PIE. Prints
 * "alpha ADDR", "beta ADDR", "gamma ADDR", then waits for stdin to close. */
#include <stdio.h>

__attribute__((noinline)) int symtest_alpha(int x) { return x * 3 + 1; }
__attribute__((noinline)) int symtest_beta(int x) { return symtest_alpha(x) ^ 0x55; }
__attribute__((noinline)) int symtest_gamma(int x)
{
    for (int i = 0; i < x; i++)
        x ^= symtest_beta(i);
    return x;
}

int main(void)
{
    printf("alpha %p\nbeta %p\ngamma %p\n", (void *)symtest_alpha, (void *)symtest_beta,
           (void *)symtest_gamma);
    fflush(stdout);
    while (getchar() != EOF)
        ;
    return symtest_gamma(2) == 12345;
}
