/* C side of sink.hs: deep_block (deep_c.c) called with rbp, which is GHC's
 * Sp on the way into an unsafe call, pointing 64 KB lower, as C code may
 * leave it (saved, so that an unwind restores Sp). */
long deep_block(long secs);

long sink_block_low_rbp(long secs)
{
    long r;
    __asm__ volatile("sub $0x10000, %%rbp" ::: "rbp", "memory");
    r = deep_block(secs);
    __asm__ volatile("add $0x10000, %%rbp" ::: "rbp", "memory");
    return r;
}
