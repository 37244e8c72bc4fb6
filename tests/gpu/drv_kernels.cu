// Kernels for app_driver: compiled by build.sh into a fatbin (sm_90 SASS + compute_90 PTX) that
// app_driver embeds and loads with cuModuleLoadData / cuLibraryLoadData. extern "C" keeps the
// names unmangled, so each launch path has its own exactly known kernel name.

static __device__ __forceinline__ unsigned long long global_ns()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

static __device__ __forceinline__ void step_and_spin(unsigned *buf, unsigned long long ns,
                                                     unsigned salt)
{
    unsigned long long t0 = global_ns();
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned v = buf[i];
    v = v * 1664525u + 1013904223u + salt;
    buf[i] = v ^ (v >> 13);
    while (global_ns() - t0 < ns) {
    }
}

// launched with cuLaunchKernel on a CUfunction from cuModuleLoadData
extern "C" __global__ void drv_spin_launch(unsigned *buf, unsigned long long ns)
{
    step_and_spin(buf, ns, 11u);
}

// launched with cuLaunchKernelEx on a CUfunction from cuModuleLoadData
extern "C" __global__ void drv_spin_launch_ex(unsigned *buf, unsigned long long ns)
{
    step_and_spin(buf, ns, 23u);
}

// launched with cuLaunchKernel on CU_STREAM_PER_THREAD
extern "C" __global__ void drv_spin_per_thread(unsigned *buf, unsigned long long ns)
{
    step_and_spin(buf, ns, 37u);
}

// launched with cuLaunchKernel on a CUkernel from cuLibraryLoadData (what cudart 13 passes)
extern "C" __global__ void drv_spin_library(unsigned *buf, unsigned long long ns)
{
    step_and_spin(buf, ns, 51u);
}
