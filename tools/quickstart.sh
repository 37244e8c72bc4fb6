#!/usr/bin/env bash
# tools/quickstart.sh - the first command of the README: installs missing build
# dependencies (as root; otherwise prints the apt-get line), builds ktime in build/ (or in
# place, where ./configure was run at the top already: autoconf allows no second build of a
# tree configured in place), builds the bundled example CUDA program and profiles it, printing
# ktime's report.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
tools/deps.sh || exit 1
if [ ! -x configure ]; then autoreconf -fi >/dev/null 2>&1 || { echo "quickstart: autoreconf failed" >&2; exit 1; }; fi
if [ -f config.status ]; then
    bld=.
else
    bld=build
    mkdir -p build
    if [ ! -f build/Makefile ]; then (cd build && ../configure -q ${CONFIGURE_FLAGS:-}) || exit 1; fi
fi
make -C $bld -j"$(nproc)" >/dev/null || { echo "quickstart: the build failed: make -C $bld" >&2; exit 1; }
lib=$(cd "$bld" && pwd)/src/.libs/libktime.so
echo "quickstart: built $lib"

nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
if [ ! -x "$nvcc" ]; then
    echo "quickstart: no nvcc found, so the example was not built; ktime itself is ready."
    exit 0
fi
mkdir -p build/example
"$nvcc" -O2 -o build/example/saxpy tools/example/saxpy.cu || exit 1
echo "quickstart: built build/example/saxpy"
# The timer API's example (include/ktime.h): timer_example.c, linked with -lktime, times the
# kernel of spin.cu, loaded from PTX (the driver compiles it for whatever GPU there is).
cuda_home=$(dirname "$(dirname "$nvcc")")
if "$nvcc" -ptx -o build/example/spin.ptx tools/example/spin.cu &&
    ${CC:-cc} -O2 -Iinclude -I"$cuda_home/include" -o build/example/timer_example tools/example/timer_example.c \
        -L"${lib%/*}" -lktime -L"$cuda_home/lib64/stubs" -lcuda -Wl,-rpath,"${lib%/*}"; then
    echo "quickstart: built build/example/timer_example"
else
    echo "quickstart: could not build the timer API's example (build/example/timer_example)" >&2
fi
if ! nvidia-smi -L >/dev/null 2>&1; then
    echo "quickstart: this machine has no NVIDIA GPU (nvidia-smi found none), so the example"
    echo "cannot run here. On a GPU machine this step runs:"
    echo "  LD_PRELOAD=$lib build/example/saxpy"
    echo "  KTIME_DISABLE=1 build/example/timer_example build/example/spin.ptx spin 100"
    echo "The tests need no GPU: tools/test.sh"
    exit 0
fi
echo "quickstart: LD_PRELOAD=$lib build/example/saxpy"
LD_PRELOAD="$lib" build/example/saxpy
if [ -x build/example/timer_example ]; then
    echo "quickstart: KTIME_DISABLE=1 build/example/timer_example build/example/spin.ptx spin 100"
    KTIME_DISABLE=1 build/example/timer_example build/example/spin.ptx spin 100
fi
