/* inject_dummy.c - a CUDA injection library that does nothing, for ktime's GPU tests: with
 * CUDA_INJECTION64_PATH pointing at it, the driver loads it and calls InitializeInjection as
 * it does for Nsight Systems' and Nsight Compute's, and ktime must time with events and say
 * why, without touching CUPTI. */
int InitializeInjection(void)
{
    return 1;
}
