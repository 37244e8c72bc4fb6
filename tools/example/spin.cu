// spin.cu - a kernel for tools/example/timer_example.c on a GPU: it spins for SPIN_NS
// nanoseconds of the GPU's global timer. No parameters, C linkage, so that the example can
// find it by name in the PTX that tools/quickstart.sh makes: nvcc -ptx -o spin.ptx spin.cu
#ifndef SPIN_NS
#define SPIN_NS 20000
#endif

extern "C" __global__ void spin()
{
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (t - t0 < SPIN_NS);
}
