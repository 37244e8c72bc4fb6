#!/bin/sh
# transparency.sh - ktime is invisible where it has nothing to do, and dlsym keeps its
# meaning: programs without CUDA, RTLD_NEXT from libraries, the driver's own dlsym. TAP.
. "$(dirname "$0")/lib.sh"
need_ktime

run_plain b "$E2E_BIN/app_nocuda"
run_ktime k KTIME_OUTPUT="$tmp/r.json" "$E2E_BIN/app_nocuda"
check "no CUDA: same exit status and stdout" same_run b k
check "no CUDA: one line saying an empty report was written" \
    sh -c "[ \$(wc -l <'$tmp/k.err') = 1 ] && grep -q '^ktime: no CUDA launches seen in app_nocuda (pid [0-9]*); empty report written to $tmp/r.json\$' '$tmp/k.err'"
check "no CUDA: an empty report (silent.sh checks it)" jc "$tmp/r.json" totals.launches_seen == 0
run_ktime k2 "$E2E_BIN/app_nocuda"
check "no CUDA, no KTIME_OUTPUT: nothing on stderr (no empty report)" empty "$tmp/k2.err"
run_ktime k3 KTIME_LOG=debug KTIME_OUTPUT="$tmp/r3.json" "$E2E_BIN/app_nocuda"
check "no CUDA, KTIME_LOG=debug: same stdout, an empty report" sh -c "cmp -s '$tmp/b.out' '$tmp/k3.out' && [ -s '$tmp/r3.json' ]"

run_plain sb sh -c 'echo hello; exit 7'
run_ktime sk KTIME_OUTPUT="$tmp/s.json" sh -c 'echo hello; exit 7'
check "a shell under ktime: exit status 7 and stdout kept" same_run sb sk
# A shell that ends with _exit (dash) runs no exit handler, and writes nothing; one that
# calls exit (bash) writes an empty report and says so.
check "a shell under ktime: one line and an empty report, or (ended by _exit) neither" \
    sh -c "if [ -e '$tmp/s.json' ]; then [ \$(wc -l <'$tmp/sk.err') = 1 ] && grep -q 'no CUDA launches seen' '$tmp/sk.err'; else [ ! -s '$tmp/sk.err' ]; fi"

# A tool preloaded before libktime that wraps dlopen/dlclose and finds the real ones with
# dlsym(RTLD_NEXT), as compute-sanitizer does: ktime's dlsym must not call back into it (on a
# GPU the program hung; the test library exits 86 instead).
_first=${E2E_PRELOAD_FIRST:-}
# (librtldlater between them, as the tool's other libraries are: dlsym's short cut for a
# caller just before libktime does not apply.)
E2E_PRELOAD_FIRST="${_first:+$_first:}$E2E_BIN/libdlwrap.so:$E2E_BIN/librtldlater.so"
run_ktime dw KTIME_OUTPUT="$tmp/dw.json" "$E2E_BIN/app_rtld_next"
run_ktime dw2 KTIME_OUTPUT="$tmp/dw2.json" "$E2E_BIN/app_cudart" k=125000:8
E2E_PRELOAD_FIRST=$_first
run_plain dwb env LD_PRELOAD="$E2E_BIN/libdlwrap.so:$E2E_BIN/librtldlater.so" "$E2E_BIN/app_rtld_next"
run_plain dwb2 env LD_PRELOAD="$E2E_BIN/libdlwrap.so:$E2E_BIN/librtldlater.so" "$E2E_BIN/app_cudart" k=125000:8
check "a dlopen-wrapping tool before ktime: RTLD_NEXT program unchanged" same_run dwb dw
check "a dlopen-wrapping tool before ktime: CUDA program unchanged" same_run dwb2 dw2
check "a dlopen-wrapping tool before ktime: the CUDA program is still timed" exact "$tmp/dw2.json" k 3 125

run_plain rb "$E2E_BIN/app_rtld_next"
run_ktime rk KTIME_OUTPUT="$tmp/rt.json" "$E2E_BIN/app_rtld_next"
check "RTLD_NEXT keeps its meaning relative to the caller" same_run rb rk
check "RTLD_NEXT: a library's wrapper reaches the next library's symbol" grep -qx 'rtld_probe(10) = 21' "$tmp/rk.out"
check "RTLD_NEXT: a library does not find its own symbol" grep -qx 'library RTLD_NEXT skips itself: yes' "$tmp/rk.out"
check "RTLD_NEXT: getenv from a library is libc's" grep -qx "library RTLD_NEXT getenv is libc's: yes" "$tmp/rk.out"
check "RTLD_NEXT: only the line of the empty report on stderr" \
    sh -c "[ \$(wc -l <'$tmp/rk.err') = 1 ] && grep -q '^ktime: no CUDA launches seen in app_rtld_next' '$tmp/rk.err'"

# The driver calls dlsym itself (gpu-facts.md). The fake's cuInit asks, from inside
# libcuda, dlsym(RTLD_DEFAULT, "cuInit") (must be libcuda's own, even when libcuda was
# dlopened RTLD_LOCAL as cudart does) and dlsym(RTLD_NEXT, "cuInit") (must be NULL: nothing
# after libcuda defines it; with libcuda linked, a lookup forwarded from libktime would find
# libcuda's). Both are caller-relative: an interposed dlsym must keep that.
for p in app_cudart app_driver; do
    rm -f "$tmp/d.cnt"
    run_plain db "$E2E_BIN/$p" k=125000:6
    run_ktime dk KTIME_OUTPUT="$tmp/d.json" FAKECUDA_COUNT_FILE="$tmp/d.cnt" "$E2E_BIN/$p" k=125000:6
    check "$p: the driver's own dlsym(RTLD_DEFAULT) from libcuda finds libcuda's symbol" \
        grep -qx 'dlsym_default ok' "$tmp/d.cnt"
    check "$p: the driver's own dlsym(RTLD_NEXT) from libcuda keeps its meaning" grep -qx 'dlsym_next ok' "$tmp/d.cnt"
    run_ktime ds KTIME_OUTPUT="$tmp/d.json" FAKECUDA_DLSYM_STRICT=1 "$E2E_BIN/$p" k=125000:6
    check "$p: a driver that trusts its own dlsym still initialises under ktime" same_run db ds
done

finish
