#!/usr/bin/env bash
# shellcheck disable=SC2317  # the check helpers below are called through "check"
# Builds ktime's GPU test programs on a machine with the CUDA toolkit (no GPU needed).
#
#   bash tests/gpu/build.sh OUTDIR        e.g.  bash tests/gpu/build.sh build/gpu
#
# OUTDIR receives app_static, app_shared, app_ptds, app_paths, app_driver, app_exitrace,
# app_sigterm, where, flush_l2, memops, chain, api_timer (linked with libktime.so from KTIME_LIBDIR), libkcount.so and BUILD-INFO.txt
# (intermediate files go to OUTDIR/obj). Every target is attempted even when an earlier one
# fails; the exit status is 0 only when all of them were built and passed their checks.
# Environment: CUDA_HOME (default /usr/local/cuda), NVCC (default $CUDA_HOME/bin/nvcc),
# CC (default gcc), PYTHON (default python3, used to embed the fatbin).
set -u

if [ $# -ne 1 ] || [ -z "$1" ]; then
    echo "usage: $0 OUTDIR" >&2
    exit 2
fi

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
NVCC=${NVCC:-$CUDA_HOME/bin/nvcc}
CC=${CC:-gcc}
PYTHON=${PYTHON:-python3}
# The GPU machine has the toolkit in the same place; /usr/local/cuda/lib64 is also written into
# the run paths literally, in case CUDA_HOME here is a versioned folder.
RUNTIME_LIBDIRS="/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64"
if [ "$CUDA_HOME/lib64" != /usr/local/cuda/lib64 ]; then
    RUNTIME_LIBDIRS="$RUNTIME_LIBDIRS:$CUDA_HOME/lib64"
fi
# shellcheck disable=SC2054  # the commas belong to nvcc's syntax
GENCODE=(-gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90)

mkdir -p "$1/obj" || { echo "build.sh: cannot create $1" >&2; exit 1; }
OUTDIR=$(cd "$1" && pwd)
OBJ=$OUTDIR/obj

failed=()
built=()

# step NAME CMD...: runs CMD, echoing it, and records NAME as failed when it fails.
step() {
    local name=$1
    shift
    echo "+ $*"
    if "$@"; then
        return 0
    fi
    echo "build.sh: FAILED: $name (exit $?)" >&2
    failed+=("$name")
    return 1
}

# check NAME DESCRIPTION CMD...: a post-build check; failing it marks NAME failed.
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
has_string() { grep -qaF "$2" "$1"; }
not_stub_rpath() { ! readelf -d "$1" 2>/dev/null | grep -E "\((RPATH|RUNPATH)\)" | grep -qF stubs; }
has_rpath() { readelf -d "$1" 2>/dev/null | grep -F "(RPATH)" | grep -qF /usr/local/cuda/lib64; }
no_subscribe() { nm -D "$1" >/dev/null 2>&1 && ! nm -D --undefined-only "$1" | grep -qw cuptiSubscribe; }

for tool in "$NVCC" "$CC" "$PYTHON" readelf; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "build.sh: $tool not found" >&2
        exit 1
    fi
done
if [ ! -f "$CUDA_HOME/include/cupti.h" ] || [ ! -e "$CUDA_HOME/lib64/libcupti.so" ]; then
    echo "build.sh: CUPTI not found under $CUDA_HOME (include/cupti.h, lib64/libcupti.so)" >&2
    failed+=("cupti")
fi

echo "== build.sh: $NVCC -> $OUTDIR"
"$NVCC" --version | tail -n 2

# --- the runtime-API app, three ways -------------------------------------------------------
NVFLAGS=(-O2 -std=c++17 "${GENCODE[@]}" -Xcompiler -Wall)

if step app_static "$NVCC" "${NVFLAGS[@]}" -o "$OUTDIR/app_static" "$HERE/app.cu" -lpthread; then
    check app_static "no libcudart.so dependency (static cudart)" not_needed "$OUTDIR/app_static" libcudart
    check app_static "kernel names present" has_string "$OUTDIR/app_static" ktg_spinILi3E
    built+=(app_static)
fi

if step app_shared "$NVCC" "${NVFLAGS[@]}" -cudart shared -Xlinker -rpath -Xlinker "$RUNTIME_LIBDIRS" \
    -o "$OUTDIR/app_shared" "$HERE/app.cu" -lpthread; then
    check app_shared "depends on libcudart.so.13" needed "$OUTDIR/app_shared" libcudart.so.13
    built+=(app_shared)
fi

if step app_ptds "$NVCC" "${NVFLAGS[@]}" --default-stream per-thread \
    -o "$OUTDIR/app_ptds" "$HERE/app.cu" -lpthread; then
    check app_ptds "no libcudart.so dependency (static cudart)" not_needed "$OUTDIR/app_ptds" libcudart
    check app_ptds "built in per-thread default stream mode" has_string "$OUTDIR/app_ptds" "per-thread default stream"
    built+=(app_ptds)
fi

# --- the other launch paths: cluster, cooperative, graph, streams, reset, NVRTC, 2 GPUs ------
if step app_paths "$NVCC" "${NVFLAGS[@]}" -Xlinker -rpath -Xlinker "$RUNTIME_LIBDIRS" \
    -o "$OUTDIR/app_paths" "$HERE/app_paths.cu" -L"$CUDA_HOME/lib64/stubs" -lcuda -lnvrtc; then
    check app_paths "no libcudart.so dependency (static cudart)" not_needed "$OUTDIR/app_paths" libcudart
    check app_paths "depends on libnvrtc" needed "$OUTDIR/app_paths" libnvrtc.so
    check app_paths "no run path into the stubs folder" not_stub_rpath "$OUTDIR/app_paths"
    built+=(app_paths)
fi

# --- the driver-API app: fatbin embedded as a C array --------------------------------------
if step drv_fatbin "$NVCC" --fatbin "${GENCODE[@]}" -o "$OBJ/drv_kernels.fatbin" "$HERE/drv_kernels.cu" &&
    step drv_fatbin_h "$PYTHON" - "$OBJ/drv_kernels.fatbin" "$OBJ/drv_fatbin.h" <<'PY'
import sys
data = open(sys.argv[1], "rb").read()
if len(data) < 16:
    sys.exit("fatbin too small: %d bytes" % len(data))
lines = ["/* generated by tests/gpu/build.sh from drv_kernels.fatbin: do not edit */",
         "#include <stddef.h>",
         "static const unsigned char drv_fatbin[] __attribute__((aligned(64))) = {"]
for i in range(0, len(data), 16):
    lines.append("    " + ", ".join("0x%02x" % b for b in data[i:i + 16]) + ",")
lines.append("};")
lines.append("static const size_t drv_fatbin_len = %d;" % len(data))
open(sys.argv[2], "w").write("\n".join(lines) + "\n")
print("  embedded %d bytes" % len(data))
PY
then
    if step app_driver "$CC" -O2 -std=gnu11 -Wall -Wextra -I"$CUDA_HOME/include" -I"$OBJ" \
        -o "$OUTDIR/app_driver" "$HERE/app_driver.c" -L"$CUDA_HOME/lib64/stubs" -lcuda; then
        check app_driver "depends on libcuda.so.1" needed "$OUTDIR/app_driver" libcuda.so.1
        check app_driver "no run path into the stubs folder" not_stub_rpath "$OUTDIR/app_driver"
        check app_driver "fatbin holds all four kernels" has_string "$OBJ/drv_kernels.fatbin" drv_spin_library
        built+=(app_driver)
    fi
fi

if step app_exitrace "$NVCC" "${NVFLAGS[@]}" -o "$OUTDIR/app_exitrace" "$HERE/app_exitrace.cu" -lpthread; then
    built+=(app_exitrace)
fi

if step app_sigterm "$NVCC" "${NVFLAGS[@]}" -o "$OUTDIR/app_sigterm" "$HERE/app_sigterm.cu"; then
    built+=(app_sigterm)
fi

if step where "$NVCC" "${NVFLAGS[@]}" -o "$OUTDIR/where" "$HERE/where.cu"; then
    built+=(where)
fi
if step flush_l2 "$NVCC" "${NVFLAGS[@]}" -o "$OUTDIR/flush_l2" "$HERE/flush_l2.cu"; then
    built+=(flush_l2)
fi

if step memops "$NVCC" "${NVFLAGS[@]}" -o "$OUTDIR/memops" "$HERE/memops.cu"; then
    built+=(memops)
fi

# --- chaining events (one between consecutive launches) against a pair per launch, no ktime ---
if step chain "$NVCC" "${NVFLAGS[@]}" -o "$OUTDIR/chain" "$HERE/chain.cu"; then
    built+=(chain)
fi

if step inject_dummy "$CC" -O2 -fPIC -shared -o "$OUTDIR/libinject_dummy.so" "$HERE/inject_dummy.c"; then
    built+=(inject_dummy)
fi

# --- the timer API (include/ktime.h) against CUPTI: needs libktime.so built first ------------
# KTIME_LIBDIR: the folder of libktime.so (default: build/src/.libs of this checkout). Not run by
# run.sh; run it as LD_LIBRARY_PATH=KTIME_LIBDIR OUTDIR/api_timer (tests/gpu/README.md).
KTIME_LIBDIR=${KTIME_LIBDIR:-$HERE/../../build/src/.libs}
if [ -f "$KTIME_LIBDIR/libktime.so" ]; then
    if step api_timer "$NVCC" "${NVFLAGS[@]}" -I"$HERE/../../include" -Xlinker -rpath -Xlinker "$RUNTIME_LIBDIRS" \
        -o "$OUTDIR/api_timer" "$HERE/api_timer.cu" -L"$KTIME_LIBDIR" -lktime -L"$CUDA_HOME/lib64" -lcupti; then
        check api_timer "depends on libktime.so" needed "$OUTDIR/api_timer" libktime.so
        built+=(api_timer)
    fi
else
    echo "build.sh: FAILED: api_timer: no libktime.so in $KTIME_LIBDIR (build ktime first, or set KTIME_LIBDIR)" >&2
    failed+=(api_timer)
fi

# --- the independent counter ---------------------------------------------------------------
if step libkcount "$CC" -O2 -g -std=gnu11 -Wall -Wextra -fPIC -shared -I"$CUDA_HOME/include" \
    -o "$OUTDIR/libkcount.so" "$HERE/kcount.c" -L"$CUDA_HOME/lib64" -lcupti -lpthread \
    -Wl,-z,defs -Wl,--disable-new-dtags -Wl,-rpath,"$RUNTIME_LIBDIRS"; then
    check libkcount "depends on libcupti.so.13" needed "$OUTDIR/libkcount.so" libcupti.so.13
    check libkcount "RPATH (not RUNPATH) to the CUPTI folder" has_rpath "$OUTDIR/libkcount.so"
    check libkcount "does not subscribe to CUPTI callbacks" no_subscribe "$OUTDIR/libkcount.so"
    built+=(libkcount)
fi

{
    echo "built: $(date -u '+%Y-%m-%dT%H:%M:%SZ') on $(uname -n) ($(uname -sr))"
    echo "nvcc: $("$NVCC" --version | tail -n 1)"
    echo "cc: $("$CC" --version | head -n 1)"
    echo "gencode: ${GENCODE[*]}"
    echo "git: $(git -C "$HERE" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$HERE" status --porcelain 2>/dev/null | grep -q . && echo ' (dirty)')"
    for f in app_static app_shared app_ptds app_paths app_driver app_exitrace app_sigterm api_timer libkcount.so; do
        [ -f "$OUTDIR/$f" ] && echo "$(sha256sum "$OUTDIR/$f" | cut -c1-16)  $(stat -c %s "$OUTDIR/$f")  $f"
    done
} >"$OUTDIR/BUILD-INFO.txt"

echo "== build.sh: built: ${built[*]:-none}"
if [ ${#failed[@]} -gt 0 ]; then
    echo "== build.sh: FAILED: ${failed[*]}" >&2
    exit 1
fi
echo "== build.sh: all targets OK"
exit 0
