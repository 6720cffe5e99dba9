/* C side of unsafe_leaf.hs: a busy loop with a recognisable name. */
long unsafe_leaf_spin(long n)
{
    volatile long s = 0;
    for (long i = 0; i < n; i++)
        s += i;
    return s;
}
