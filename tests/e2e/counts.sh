#!/bin/sh
# counts.sh - every launch is counted exactly once and timed exactly, whichever way it
# reaches the driver: cudart-like (cuGetProcAddress pointers: legacy, per-thread, Ex,
# cooperative, CUkernel handles, special stream handles) and direct -lcuda calls. TAP.
. "$(dirname "$0")/lib.sh"
need_ktime

PLAN="k_small=125000:40 k_big=1000000:10 _Z6squarePfi=250000:20"

# one_case LABEL PROGRAM OPTIONS...: baseline, then under ktime with KTIME_WARMUP=2.
one_case() {
    _label=$1
    _prog=$2
    shift 2
    run_plain base "$@" "$E2E_BIN/$_prog" $PLAN
    rm -f "$tmp/r.json" "$tmp/c.cnt"
    run_ktime kt KTIME_OUTPUT="$tmp/r.json" KTIME_WARMUP=2 FAKECUDA_COUNT_FILE="$tmp/c.cnt" "$@" "$E2E_BIN/$_prog" $PLAN
    check "$_label: same exit status and stdout as without ktime" same_run base kt
    check "$_label: nothing on stderr" empty "$tmp/kt.err"
    check "$_label: report is valid JSON" jc "$tmp/r.json"
    check "$_label: calls per kernel equal the fake's launch counts" counts_match "$tmp/r.json" "$tmp/c.cnt"
    check "$_label: k_small timed 38 x 125 us exactly" exact "$tmp/r.json" k_small 38 125
    check "$_label: k_big timed 8 x 1000 us exactly" exact "$tmp/r.json" k_big 8 1000
    check "$_label: _Z6squarePfi timed 18 x 250 us exactly" exact "$tmp/r.json" _Z6squarePfi 18 250
    check "$_label: every launch in exactly one bucket" accounting "$tmp/r.json"
    check "$_label: two events recorded per timed launch, none for warmup" events_balanced "$tmp/r.json" "$tmp/c.cnt"
    check "$_label: each sample read once, with cuEventElapsedTime_v2 (38 + 8 + 18), never the v1 ABI" \
        sh -c "grep -qx 'event_elapsed_v2 64' '$tmp/c.cnt' && grep -qx 'event_elapsed_v1 0' '$tmp/c.cnt'"
}

PLAN_BASE=$PLAN
for o in "" --ptds --stream --ex "--ex --ptds" "--ex --stream" --coop "--coop --ptds" --library --kernel-function \
    "--library --ptds --ex" --handle-legacy --handle-per-thread --mixed "--sync-each --ptds"; do
    PLAN="$o $PLAN_BASE"
    one_case "cudart-like ${o:-legacy NULL stream}" app_cudart
done
for o in "" --stream --ex --coop --ptsz "--ptsz --ex" --library --handle-legacy --handle-per-thread; do
    PLAN="$o $PLAN_BASE"
    one_case "-lcuda ${o:-legacy NULL stream}" app_driver
done
PLAN=$PLAN_BASE

# --- report header --------------------------------------------------------------------------
run_ktime hdr KTIME_OUTPUT="$tmp/h.json" "$E2E_BIN/app_cudart" --stream k_small=125000:7 k_big=1000000:6
R=$tmp/h.json
check "schema_version is 2" jc "$R" schema_version == 2
check "timing_method is cuda-events" jc "$R" timing_method == cuda-events
check "warmup defaults to 5" jc "$R" warmup == 5
check "ktime_version is a string" jc "$R" 'ktime_version|type' == string
check "ktime_build is a git revision or empty" \
    grep -Eq '^  "ktime_build": "([0-9a-f]{7,}(-dirty)?)?",$' "$R"
check "the library names the same build, for tools that only read the file" \
    sh -c "b=\$(sed -n 's/^  \"ktime_build\": \"\\(.*\\)\",\$/\\1/p' '$R'); grep -a -q \"ktime-build [0-9.]* \$b\" '$KTIME_LIB'"
check "command[0] is the program" jc "$R" 'command[0]' has app_cudart
check "command holds the arguments" sh -c "'$JCHECK' '$R' 'command[1]' == --stream && '$JCHECK' '$R' 'command[3]' == k_big=1000000:6"
check "pid is a number" jc "$R" 'pid|type' == number
check "one device, ordinal 0, named by the driver" \
    sh -c "'$JCHECK' '$R' 'devices|len' == 1 && '$JCHECK' '$R' 'devices[0].ordinal' == 0 && '$JCHECK' '$R' 'devices[0].name' == 'Fake GPU 0'"
check "driver_version from cuDriverGetVersion" jc "$R" 'devices[0].driver_version' == 13000
check "kernels sorted by total_ms, largest first" sorted_by_total "$R"
check "k_big first (1 x 1000 us > 2 x 125 us)" jc "$R" 'kernels[0].mangled' == k_big
check "percent: k_big 80" jc "$R" 'kernels[mangled=k_big].percent' '~' 80 0.051
check "percent: k_small 20" jc "$R" 'kernels[mangled=k_small].percent' '~' 20 0.051
check "kernel devices list" jc "$R" 'kernels[mangled=k_small].devices[0]' == 0
check "per_device raw sums" sh -c "'$JCHECK' '$R' 'kernels[mangled=k_big].per_device[device=0].timed' == 1 && '$JCHECK' '$R' 'kernels[mangled=k_big].per_device[device=0].sum_us' '~' 1000 0.0006"
check "totals.timed_total_ms" jc "$R" totals.timed_total_ms '~' 1.25 0.0006
check "totals.timed" jc "$R" totals.timed == 3

# --- demangling -------------------------------------------------------------------------------
run_ktime mg KTIME_OUTPUT="$tmp/m.json" KTIME_WARMUP=0 "$E2E_BIN/app_cudart" _Z6squarePfi=250000:2
check "a mangled kernel keeps its symbol name in 'mangled'" jc "$tmp/m.json" 'kernels[0].mangled' == _Z6squarePfi
check "its name is demangled, or the symbol when it cannot be" \
    sh -c "n=\$('$JCHECK' '$tmp/m.json' 'kernels[0].name'); [ \"\$n\" = 'square(float*, int)' ] || [ \"\$n\" = _Z6squarePfi ] || { echo \"name '\$n'\"; exit 1; }"

# A kernel name that is not UTF-8 (a byte 0xFF, a cut-short sequence) next to one that is
# (U+00E9): JSON is UTF-8, so the report shows U+FFFD for each stray byte and stays valid.
bad=$(printf 'k\377bad\342\202')
good=$(printf 'k_caf\303\251')
run_ktime u8 KTIME_OUTPUT="$tmp/u8.json" KTIME_WARMUP=0 "$E2E_BIN/app_cudart" "$bad=125000:2" "$good=125000:1"
check "a kernel name that is not UTF-8: the report is valid JSON" jc "$tmp/u8.json"
check "... each stray byte is U+FFFD" jc "$tmp/u8.json" "kernels[mangled=$(printf 'k\357\277\275bad\357\277\275\357\277\275')].calls" == 2
check "... a name that is UTF-8 is kept as it is" jc "$tmp/u8.json" "kernels[mangled=$good].calls" == 1

# --- several devices -----------------------------------------------------------------------
rm -f "$tmp/d.cnt"
run_plain mdb FAKECUDA_DEVICES=2 "$E2E_BIN/app_driver" --devices 2 k_d=125000:20 k_e=250000:1
run_ktime md KTIME_OUTPUT="$tmp/d.json" KTIME_WARMUP=0 FAKECUDA_DEVICES=2 FAKECUDA_COUNT_FILE="$tmp/d.cnt" \
    "$E2E_BIN/app_driver" --devices 2 k_d=125000:20 k_e=250000:1
check "two devices: same exit status and stdout" same_run mdb md
check "two devices: counts" counts_match "$tmp/d.json" "$tmp/d.cnt"
check "two devices: both listed" sh -c "'$JCHECK' '$tmp/d.json' 'devices|len' == 2 && '$JCHECK' '$tmp/d.json' 'devices[ordinal=1].name' == 'Fake GPU 1'"
check "two devices: k_d ran on both" jc "$tmp/d.json" 'kernels[mangled=k_d].devices|len' == 2
check "two devices: k_d per device 11 + 9 (k_e takes one turn on device 1)" \
    sh -c "'$JCHECK' '$tmp/d.json' 'kernels[mangled=k_d].per_device[device=0].timed' == 11 && '$JCHECK' '$tmp/d.json' 'kernels[mangled=k_d].per_device[device=1].timed' == 9"
check "two devices: k_d exact" exact "$tmp/d.json" k_d 20 125
check "two devices: every launch in exactly one bucket" accounting "$tmp/d.json"

# One CUkernel handle (a library kernel, valid in every context) on two devices, with a
# warmup: its first launch on the second device loads the module there, inside the interval,
# so it is one more warmup launch (devices alternate: warmup d0 d1, then d0 timed, d1 warmup).
rm -f "$tmp/l.cnt"
run_plain ldb FAKECUDA_DEVICES=2 "$E2E_BIN/app_driver" --devices 2 --library k_d=125000:20
run_ktime ld KTIME_OUTPUT="$tmp/l.json" KTIME_WARMUP=2 FAKECUDA_DEVICES=2 FAKECUDA_COUNT_FILE="$tmp/l.cnt" \
    "$E2E_BIN/app_driver" --devices 2 --library k_d=125000:20
check "one handle on two devices: same exit status and stdout" same_run ldb ld
check "one handle on two devices: counts" counts_match "$tmp/l.json" "$tmp/l.cnt"
check "one handle on two devices: 3 warmup launches, 17 timed exactly" \
    sh -c "'$JCHECK' '$tmp/l.json' 'kernels[mangled=k_d].warmup_skipped' == 3 && '$JCHECK' '$tmp/l.json' 'kernels[mangled=k_d].per_device[device=1].timed' == 8"
check "one handle on two devices: k_d exact" exact "$tmp/l.json" k_d 17 125
check "one handle on two devices: every launch in exactly one bucket" accounting "$tmp/l.json"

# Launches on each device's own stream while device 0's context stays current: the events
# must be taken from the stream's context (the fake refuses an event of another context).
rm -f "$tmp/f.cnt"
run_plain fdb FAKECUDA_DEVICES=2 "$E2E_BIN/app_driver" --devices 2 --stream --foreign-ctx k_d=125000:20
run_ktime fd KTIME_OUTPUT="$tmp/f.json" KTIME_WARMUP=0 FAKECUDA_DEVICES=2 FAKECUDA_COUNT_FILE="$tmp/f.cnt" \
    "$E2E_BIN/app_driver" --devices 2 --stream --foreign-ctx k_d=125000:20
check "context not current: same exit status and stdout" same_run fdb fd
check "context not current: counts" counts_match "$tmp/f.json" "$tmp/f.cnt"
check "context not current: all 20 timed exactly, on both devices" \
    sh -c "'$JCHECK' '$tmp/f.json' 'kernels[mangled=k_d].devices|len' == 2 && '$JCHECK' '$tmp/f.json' totals.dropped == 0"
check "context not current: k_d exact" exact "$tmp/f.json" k_d 20 125

finish
