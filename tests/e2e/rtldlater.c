/* rtldlater.c - librtldlater.so: defines rtld_probe, which librtldnext.so wraps. */
int rtld_probe(int x);
int rtld_later_marker(void);

int rtld_probe(int x)
{
    return 2 * x;
}

/* Called by the program so the link keeps this library (even with --as-needed). */
int rtld_later_marker(void)
{
    return 1;
}
