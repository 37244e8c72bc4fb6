#!/bin/sh
# runtime.sh - launches through the CUDA runtime's exported entry points (cudaLaunchKernel,
# cudaLaunchKernelExC and their _ptsz forms, from a fake libcudart that reaches the driver
# through cuGetProcAddress pointers like cudart 13): ktime's runtime exports pass them on,
# and each launch is counted and timed once, at the driver layer. TAP.
. "$(dirname "$0")/lib.sh"
need_ktime

for o in "" --ptds --ex "--ex --ptds"; do
    label="runtime ${o:-cudaLaunchKernel}"
    run_plain base "$E2E_BIN/app_runtime" $o k=125000:30 _Z3bigv=250000:12
    rm -f "$tmp/r.json" "$tmp/c.cnt"
    run_ktime kt KTIME_OUTPUT="$tmp/r.json" KTIME_WARMUP=2 FAKECUDA_COUNT_FILE="$tmp/c.cnt" \
        "$E2E_BIN/app_runtime" $o k=125000:30 _Z3bigv=250000:12
    check "$label: same exit status and stdout as without ktime" same_run base kt
    check "$label: nothing on stderr" empty "$tmp/kt.err"
    check "$label: calls per kernel equal the fake's launch counts (none counted twice)" \
        counts_match "$tmp/r.json" "$tmp/c.cnt"
    check "$label: k timed 28 x 125 us exactly" exact "$tmp/r.json" k 28 125
    check "$label: big timed 10 x 250 us exactly" exact "$tmp/r.json" _Z3bigv 10 250
    check "$label: two events per timed launch" events_balanced "$tmp/r.json" "$tmp/c.cnt"
done

# The calls really go through ktime's exports (which pass them on): its debug log says so.
run_ktime dbg KTIME_OUTPUT="$tmp/d.json" KTIME_LOG=debug "$E2E_BIN/app_runtime" --ex k=125000:3
check "runtime: ktime's cudaLaunchKernelExC export was called and passed the call on" \
    grep -q "cudaLaunchKernelExC passes through to the CUDA runtime" "$tmp/dbg.err"
check "runtime: and the launches were counted at the driver layer" jc "$tmp/d.json" 'kernels[mangled=k].calls' == 3

# A program without a CUDA runtime probing for one: libktime's exports must not answer.
run_plain pb "$E2E_BIN/app_probe"
run_ktime pk "$E2E_BIN/app_probe"
check "probe without a runtime: same answers as without ktime" same_run pb pk
check "probe without a runtime: cudaLaunchKernel absent under ktime" \
    grep -qx "cudaLaunchKernel absent" "$tmp/pk.out"

finish
