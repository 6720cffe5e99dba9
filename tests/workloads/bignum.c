/* bignum: GMP arithmetic from C, for SECONDS: products (square) and
 * remainders (reduce) of numbers of a few thousand bits, through mpz_*
 * (C, with unwind information) down to GMP's mpn_* routines (assembly
 * without it, that push the registers they use and use rbp as data).
 * Usage: bignum SECONDS */
#include <gmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

__attribute__((noinline)) static void square(mpz_t a, const mpz_t m)
{
    mpz_mul(a, a, a);
    mpz_add(a, a, m);
}

__attribute__((noinline)) static void reduce(mpz_t a, const mpz_t m)
{
    mpz_tdiv_r(a, a, m);
    mpz_mul_ui(a, a, 12345);
}

__attribute__((noinline)) static void work(mpz_t a, const mpz_t m, int n)
{
    for (int i = 0; i < n; i++) {
        square(a, m);
        reduce(a, m);
    }
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 2;
    struct timespec t0, t;
    mpz_t a, m;
    mpz_init_set_ui(a, 987654321);
    mpz_init(m);
    mpz_ui_pow_ui(m, 3, 2500);
    mpz_sub_ui(m, m, 7);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        work(a, m, 200);
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
    printf("bits %zu\n", mpz_sizeinbase(a, 2));
    mpz_clear(a);
    mpz_clear(m);
    return 0;
}
