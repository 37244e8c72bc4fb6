#!/usr/bin/env bash
# Builds ktime's overhead benchmark on a machine with the CUDA toolkit (no GPU needed).
#
#   bash tools/bench/build.sh OUTDIR        e.g.  bash tools/bench/build.sh build/bench
#
# OUTDIR receives:
#   bench               the workloads (bench.cu; static cudart, -lcuda for the driver-API part)
#   libcuptitrace.so    the CUPTI activity tracer preloaded instead of ktime (cuptitrace.c)
#   eventcost           the raw cost of cuEventQuery/cuEventElapsedTime (eventcost.c)
#   BUILD-INFO.txt
# Put OUTDIR under build/ so that it travels with `carry: ["build"]` (build/ is git-ignored).
# Environment: CUDA_HOME (default /usr/local/cuda), NVCC (default $CUDA_HOME/bin/nvcc), CC (gcc).
set -u

if [ $# -ne 1 ] || [ -z "$1" ]; then
    echo "usage: $0 OUTDIR" >&2
    exit 2
fi

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
NVCC=${NVCC:-$CUDA_HOME/bin/nvcc}
CC=${CC:-gcc}
# The GPU machine has the toolkit at the same path: written literally into the run path.
RUNTIME_LIBDIR=/usr/local/cuda/lib64
GENCODE=(-gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90)

mkdir -p "$1/obj" || { echo "build.sh: cannot create $1" >&2; exit 1; }
OUTDIR=$(cd "$1" && pwd)
OBJ=$OUTDIR/obj
failed=()

step() {
    local name=$1
    shift
    echo "+ $*"
    if "$@"; then
        return 0
    fi
    echo "build.sh: FAILED: $name" >&2
    failed+=("$name")
    return 1
}

check() {
    local name=$1 what=$2
    shift 2
    if "$@" >/dev/null 2>&1; then
        echo "  ok: $name: $what"
        return 0
    fi
    echo "build.sh: CHECK FAILED: $name: $what" >&2
    failed+=("$name")
    return 1
}

needed() { readelf -d "$1" 2>/dev/null | grep -F "(NEEDED)" | grep -qF "[$2"; }
not_needed() { ! needed "$1" "$2"; }
has_rpath() { readelf -d "$1" 2>/dev/null | grep -E "\((RPATH|RUNPATH)\)" | grep -qF "$RUNTIME_LIBDIR"; }
no_stub_rpath() { ! readelf -d "$1" 2>/dev/null | grep -E "\((RPATH|RUNPATH)\)" | grep -qF stubs; }
has_string() { grep -qaF "$2" "$1"; }
no_subscribe() { ! nm -D --undefined-only "$1" | grep -qw cuptiSubscribe; }
ptx_ok() { # the generated PTX must assemble for sm_90 (the driver JIT does the same at run time)
    # genptx calls no CUDA function; the stub libcuda only satisfies the loader here
    mkdir -p "$OBJ/stub" && ln -sf "$CUDA_HOME/lib64/stubs/libcuda.so" "$OBJ/stub/libcuda.so.1" &&
    LD_LIBRARY_PATH="$OBJ/stub${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$OUTDIR/bench" genptx 2500 --per-module 1000 --module 2 >"$OBJ/gen.ptx" &&
        grep -q kt_bench_k002499 "$OBJ/gen.ptx" &&
        "$CUDA_HOME/bin/ptxas" -arch=sm_90 -o "$OBJ/gen.cubin" "$OBJ/gen.ptx"
}

for tool in "$NVCC" "$CC" readelf nm; do
    command -v "$tool" >/dev/null 2>&1 || { echo "build.sh: $tool not found" >&2; exit 1; }
done
if [ ! -f "$CUDA_HOME/include/cupti.h" ] || [ ! -e "$CUDA_HOME/lib64/libcupti.so" ]; then
    echo "build.sh: CUPTI not found under $CUDA_HOME (include/cupti.h, lib64/libcupti.so)" >&2
    failed+=(cupti)
fi

echo "== build.sh: $NVCC -> $OUTDIR"
"$NVCC" --version | tail -n 1

# bench: static cudart (nvcc's default: what most CUDA programs ship), plus libcuda for the
# driver-API workload. libcuda is linked against the stub; the real one is found by soname.
if step bench "$NVCC" -O2 -std=c++17 -arch=sm_90 "${GENCODE[@]}" -Xcompiler -Wall \
    -o "$OUTDIR/bench" "$HERE/bench.cu" -L"$CUDA_HOME/lib64/stubs" -lcuda; then
    check bench "static cudart (no libcudart.so dependency)" not_needed "$OUTDIR/bench" libcudart
    check bench "depends on libcuda.so.1" needed "$OUTDIR/bench" libcuda.so.1
    check bench "no run path into the stubs folder" no_stub_rpath "$OUTDIR/bench"
    check bench "128 distinct tiny kernels" has_string "$OUTDIR/bench" _Z13kt_bench_tinyILi127EEvPi
    check bench "a spin kernel per length (kt_bench_spin<10>)" has_string "$OUTDIR/bench" _Z13kt_bench_spinILi10EEvPi
    check bench "generated PTX assembles for sm_90" ptx_ok
fi

if step libcuptitrace "$CC" -O2 -g -std=gnu11 -Wall -Wextra -fPIC -shared -I"$CUDA_HOME/include" \
    -o "$OUTDIR/libcuptitrace.so" "$HERE/cuptitrace.c" -L"$CUDA_HOME/lib64" -lcupti \
    -Wl,-z,defs -Wl,--disable-new-dtags -Wl,-rpath,"$RUNTIME_LIBDIR"; then
    check libcuptitrace "depends on libcupti.so.13" needed "$OUTDIR/libcuptitrace.so" libcupti.so
    check libcuptitrace "RPATH to $RUNTIME_LIBDIR" has_rpath "$OUTDIR/libcuptitrace.so"
    check libcuptitrace "does not subscribe to CUPTI callbacks" no_subscribe "$OUTDIR/libcuptitrace.so"
fi

# range_cost: ktime_range_push/pop against two clock reads (no CUDA).
if step range_cost "$CC" -O2 -g -std=gnu11 -Wall -Wextra -o "$OUTDIR/range_cost" "$HERE/range_cost.c" -ldl; then
    built+=(range_cost)
fi

# eventcost: the raw cost of the drain's driver calls, and their answers before completion.
if step eventcost "$CC" -O2 -g -std=gnu11 -Wall -Wextra -I"$CUDA_HOME/include" \
    -o "$OUTDIR/eventcost" "$HERE/eventcost.c" -L"$CUDA_HOME/lib64/stubs" -lcuda -lpthread; then
    check eventcost "depends on libcuda.so.1" needed "$OUTDIR/eventcost" libcuda.so.1
    check eventcost "no run path into the stubs folder" no_stub_rpath "$OUTDIR/eventcost"
fi

{
    echo "built: $(date -u '+%Y-%m-%dT%H:%M:%SZ') on $(uname -n) ($(uname -sr))"
    echo "nvcc: $("$NVCC" --version | tail -n 1)"
    echo "gencode: -arch=sm_90 ${GENCODE[*]}"
    echo "git: $(git -C "$HERE" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$HERE" status --porcelain 2>/dev/null | grep -q . && echo ' (dirty)')"
    for f in bench libcuptitrace.so eventcost; do
        [ -f "$OUTDIR/$f" ] && echo "$(sha256sum "$OUTDIR/$f" | cut -c1-16)  $(stat -c %s "$OUTDIR/$f")  $f"
    done
} >"$OUTDIR/BUILD-INFO.txt"

if [ ${#failed[@]} -gt 0 ]; then
    echo "== build.sh: FAILED: ${failed[*]}" >&2
    exit 1
fi
echo "== build.sh: all targets OK"
exit 0
