#!/bin/sh
# fake.sh - the fake driver's own contract and every test program against it, without ktime.
# TAP. Needs no libktime.so: if this fails, the other e2e results mean nothing.
. "$(dirname "$0")/lib.sh"

# The fake's self-test prints "ok - ..." / "not ok - ...": number its lines.
run_plain selftest FAKECUDA_DEVICES=3 FAKECUDA_COMPLETE_DELAY_US=20000 FAKECUDA_COUNT_FILE="$tmp/selftest.cnt" \
    "$E2E_BIN/fake_selftest"
selftest_lines "$tmp/selftest.out" "fake: "
check "fake self-test exits 0" rc_is selftest 0
check "fake self-test writes nothing to stderr" empty "$tmp/selftest.err"
check "fake self-test: the count file has the launches" \
    sh -c "grep -qx 'launch k1 9' '$tmp/selftest.cnt' && grep -qx 'launch_captured k1 2' '$tmp/selftest.cnt' && grep -qx 'graph_launch 2' '$tmp/selftest.cnt'"
check "fake self-test: cuInit's own dlsym(RTLD_DEFAULT) and dlsym(RTLD_NEXT) answered right" \
    sh -c "grep -qx 'dlsym_default ok' '$tmp/selftest.cnt' && grep -qx 'dlsym_next ok' '$tmp/selftest.cnt'"

# --- every program on its own --------------------------------------------------------------
expect_out() {  # NAME then the expected stdout lines
    _n=$1
    shift
    printf '%s\n' "$@" >"$tmp/$_n.want"
    if ! cmp -s "$tmp/$_n.want" "$tmp/$_n.out"; then
        diff "$tmp/$_n.want" "$tmp/$_n.out"
        return 1
    fi
    [ "$(rc_of "$_n")" = 0 ] || { echo "exit status $(rc_of "$_n")"; cat "$tmp/$_n.err"; return 1; }
    [ ! -s "$tmp/$_n.err" ] || { echo "stderr:"; cat "$tmp/$_n.err"; return 1; }
}

for opts in "" --ptds --stream --ex "--ex --ptds" --coop --mixed --library --kernel-function --handle-legacy \
    --handle-per-thread "--sync-each --ptds" --reset --release "--no-sync --no-unload"; do
    rm -f "$tmp/c.cnt"
    # shellcheck disable=SC2086
    run_plain cudart FAKECUDA_COUNT_FILE="$tmp/c.cnt" "$E2E_BIN/app_cudart" $opts k_small=125000:10 k_big=1000000,250000:4 \
        _Z6squarePfi=250000:3
    check "app_cudart $opts runs" expect_out cudart "driver 13000" "devices 1" "kernel k_small launched 10" \
        "kernel k_big launched 4" "kernel _Z6squarePfi launched 3" "launches 17"
    check "app_cudart $opts: the fake counted every launch and no events" \
        sh -c "grep -qx 'launch k_small 10' '$tmp/c.cnt' && grep -qx 'launch_ok k_big 4' '$tmp/c.cnt' && grep -qx 'launch _Z6squarePfi 3' '$tmp/c.cnt' && grep -qx 'event_record 0' '$tmp/c.cnt' && grep -qx 'dlsym_default ok' '$tmp/c.cnt' && grep -qx 'dlsym_next ok' '$tmp/c.cnt'"
done

for opts in "" --stream --ex --coop --ptsz "--ptsz --ex" --library --create-ctx --handle-legacy --handle-per-thread; do
    # shellcheck disable=SC2086
    run_plain driver "$E2E_BIN/app_driver" $opts k_a=125000:10 k_b=250000:5
    check "app_driver $opts runs" expect_out driver "driver 13000" "devices 1" "device 0 Fake GPU 0" \
        "kernel k_a launched 10" "kernel k_b launched 5" "launches 15"
done
run_plain driver2 FAKECUDA_DEVICES=2 "$E2E_BIN/app_driver" --devices 2 k_d=125000:20
check "app_driver --devices 2 runs" expect_out driver2 "driver 13000" "devices 2" "device 0 Fake GPU 0" \
    "device 1 Fake GPU 1" "kernel k_d launched 20" "launches 20"

for mode in --stream --ptds --legacy "--ex --ptds"; do
    # shellcheck disable=SC2086
    run_plain threads "$E2E_BIN/app_threads" 4 100 $mode
    check "app_threads 4 100 $mode runs" expect_out threads "threads 4 per_thread 100" "kernel thr_a launched 200" \
        "kernel thr_b launched 200" "launches 400"
done

run_plain exitthr "$E2E_BIN/app_exit_thread" 20 5
check "app_exit_thread exits 3 from its thread" rc_is exitthr 3
check "app_exit_thread output" sh -c "printf 'kernel ex_main launched 20\nkernel ex_thread launched 5\nexit 3\n' | cmp -s - '$tmp/exitthr.out'"

run_plain capture FAKECUDA_COUNT_FILE="$tmp/g.cnt" "$E2E_BIN/app_capture" --eager 2 4 3
check "app_capture runs" expect_out capture "capture_status active" "end_capture CUDA_SUCCESS" "kernel cap_a eager 2" \
    "captured_launches 4" "graph_launches 3"
check "app_capture: the fake saw the captures and graph launches" \
    sh -c "grep -qx 'launch_captured cap_a 2' '$tmp/g.cnt' && grep -qx 'graph_kernel cap_b 6' '$tmp/g.cnt' && grep -qx 'graph_launch 3' '$tmp/g.cnt'"
run_plain capture2 "$E2E_BIN/app_capture" --ptds 4 3
check "app_capture --ptds runs" expect_out capture2 "capture_status active" "end_capture CUDA_SUCCESS" \
    "kernel cap_a eager 0" "captured_launches 4" "graph_launches 3"

run_plain fork FAKECUDA_COUNT_FILE="$tmp/f.cnt" "$E2E_BIN/app_fork" 10 5 7
check "app_fork runs" expect_out fork "parent launched 10" "child launched 5" "parent launched 7 more"
check "app_fork: parent and child counts are kept apart" \
    sh -c "grep -qx 'launch fk_parent 17' '$tmp/f.cnt' && grep -qx 'child launch fk_child 5' '$tmp/f.cnt' && ! grep -q '^launch fk_child' '$tmp/f.cnt'"
run_plain fork2 FAKECUDA_FORK_CHILD_FAILS=1 "$E2E_BIN/app_fork" 10 5 7
check "app_fork with FAKECUDA_FORK_CHILD_FAILS=1 runs" expect_out fork2 "parent launched 10" "child cuda unavailable" \
    "parent launched 7 more"

run_plain nocuda "$E2E_BIN/app_nocuda"
check "app_nocuda runs" expect_out nocuda "no cuda here" "cos(0) = 1.0" "printf found yes" "HOME set yes"

run_plain fail FAKECUDA_COUNT_FILE="$tmp/x.cnt" "$E2E_BIN/app_fail" --null --dead-stream 10 3
check "app_fail gets the driver's errors" expect_out fail "bad_grid CUDA_ERROR_INVALID_VALUE x6" \
    "null_function CUDA_ERROR_INVALID_VALUE" "dead_stream CUDA_ERROR_INVALID_HANDLE" "kernel f_ok launched 10"
check "app_fail: the fake counted failed launches" \
    sh -c "grep -qx 'launch_failed f_bad 6' '$tmp/x.cnt' && grep -qx 'launch f_ok 11' '$tmp/x.cnt' && grep -qx 'launch_invalid 1' '$tmp/x.cnt'"

run_plain rtld "$E2E_BIN/app_rtld_next"
check "app_rtld_next: RTLD_NEXT answers are right without ktime" expect_out rtld "rtld_probe(10) = 21" \
    "library RTLD_NEXT getenv is libc's: yes" "library RTLD_NEXT skips itself: yes" \
    "program RTLD_NEXT rtld_probe is librtldnext's: yes" "program RTLD_DEFAULT rtld_probe is librtldnext's: yes"

run_plain hang FAKECUDA_COUNT_FILE="$tmp/h.cnt" "$E2E_BIN/app_cudart" --no-sync k=125000:3 hang_k=125000:1
check "a hang kernel does not hang a program that does not synchronise" rc_is hang 0
run_plain hang2 "$E2E_BIN/app_cudart" k=125000:3 hang_k=125000:1
check "synchronising after a hang kernel fails at once" rc_is hang2 1

finish
