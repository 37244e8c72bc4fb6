#!/bin/sh
# conditions.sh - the run's conditions read through NVML (issue 13), against the fake NVML
# (tests/fake/nvml/libnvidia-ml.so.1, loaded through KTIME_NVML_LIB; FAKE_NVML_* set what it
# answers): other processes on the GPU (by name and pid, at start and end, graphics too, pids
# of another pid namespace, a name of control characters escaped), MPS (control pipe, MPS server, MPS client list), clocks (range,
# locked), throttle reasons, temperature, persistence mode; devices mapped by PCI bus id (the
# fake lists them in the opposite order), UUID as the fall-back; every failure (no library,
# KTIME_NVML=0, nvmlInit_v2 failing, each query failing, a hung NVML) leaves the figure "not
# checked" and the program untouched. TAP.
. "$(dirname "$0")/lib.sh"
need_ktime

NVML=$FAKE_DIR/nvml/libnvidia-ml.so.1
[ -f "$NVML" ] || e2e_fail_setup "fake NVML not built: $NVML"
for v in $(env | sed -n 's/^\(FAKE_NVML_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
A=$E2E_BIN/app_cudart
D=$E2E_BIN/app_driver
# No MPS daemon of the machine's may show through: an empty pipe folder of our own.
mkdir "$tmp/nomps"
NV="KTIME_NVML_LIB=$NVML CUDA_MPS_PIPE_DIRECTORY=$tmp/nomps"

# Processes that stand for other users of the GPU: their pids go to the fake.
sleep 300 &
OTHER=$!
cp "$(command -v sleep)" "$tmp/nvidia-cuda-mps-server"
"$tmp/nvidia-cuda-mps-server" 300 &
MPSD=$!
# One that named itself with control characters (a process's name, /proc/PID/comm, is any
# bytes it set): a shell that renames itself, then waits (one second at a time, so that nothing
# of it outlives the test by more).
sh -c 'printf "\033x\nwarning: pwn" >/proc/$$/comm && while :; do sleep 1; done' &
NAMED=$!
trap 'kill $OTHER $MPSD $NAMED 2>/dev/null; rm -rf "$tmp"' EXIT

# grepq FILE REGEX: grep -q, showing the file when it does not match.
grepq() {
    grep -q -- "$2" "$1" && return 0
    echo "no line matches '$2' in $1:"
    head -n 30 "$1"
    return 1
}
nogrep() {
    ! grep -q -- "$2" "$1" && return 0
    echo "a line matches '$2' in $1:"
    grep -- "$2" "$1"
    return 1
}

# ---- a quiet GPU
run_plain b "$A" k=125000:30
run_ktime q $NV KTIME_OUTPUT="$tmp/q.json" FAKE_NVML_LOG="$tmp/q.log" "$A" k=125000:30
R=$tmp/q.json
check "quiet: same exit status and stdout as without ktime" same_run b q
check "quiet: the report is valid JSON" jc "$R" conditions.checked == true
check "quiet: kernels still timed exactly" exact "$R" k 25 125
check "quiet: NVML loaded from KTIME_NVML_LIB" jc "$R" conditions.library has nvml/libnvidia-ml.so.1
check "quiet: gpu 0 checked, no other process" \
    sh -c "'$JCHECK' '$R' 'conditions.devices[0].checked' == true && '$JCHECK' '$R' 'conditions.devices[0].other_process_count' == 0 && '$JCHECK' '$R' 'conditions.devices[0].other_processes|len' == 0"
check "quiet: this process is not counted as another" \
    sh -c "! '$JCHECK' '$R' 'conditions.devices[0].other_processes[pid=$(jv "$R" pid)].pid' >/dev/null 2>&1"
check "quiet: no warnings" jc "$R" 'conditions.warnings|len' == 0
check "quiet: at least a reading at the start and one at the end" jc "$R" 'conditions.devices[0].samples' '>=' 2
check "quiet: MPS checked, not active" \
    sh -c "'$JCHECK' '$R' conditions.mps.checked == true && '$JCHECK' '$R' conditions.mps.active == false"
check "quiet: persistence mode on, compute mode default, 40 C" \
    sh -c "'$JCHECK' '$R' 'conditions.devices[0].persistence_mode' == true && '$JCHECK' '$R' 'conditions.devices[0].compute_mode' == default && '$JCHECK' '$R' 'conditions.devices[0].temperature.min_c' == 40 && '$JCHECK' '$R' 'conditions.devices[0].temperature.max_c' == 40"
check "quiet: clocks not locked, SM 1980 MHz, memory 2619 MHz" \
    sh -c "'$JCHECK' '$R' 'conditions.devices[0].clocks.locked' == false && '$JCHECK' '$R' 'conditions.devices[0].clocks.sm_min_mhz' == 1980 && '$JCHECK' '$R' 'conditions.devices[0].clocks.sm_max_mhz' == 1980 && '$JCHECK' '$R' 'conditions.devices[0].clocks.mem_max_mhz' == 2619"
check "quiet: no throttling" \
    sh -c "'$JCHECK' '$R' 'conditions.devices[0].throttle.reasons_seen|len' == 0 && '$JCHECK' '$R' 'conditions.devices[0].throttle.power_s' == 0"
check "quiet: nvmlInit_v2 once, nvmlShutdown once, at the end" \
    sh -c "[ \$(grep -c '^nvmlInit_v2\$' '$tmp/q.log') = 1 ] && [ \$(grep -c '^nvmlShutdown\$' '$tmp/q.log') = 1 ] && [ \"\$(tail -n 1 '$tmp/q.log')\" = nvmlShutdown ]"
check "quiet: the device found by its PCI bus id" grepq "$tmp/q.log" '^bus 0000:01:00.0$'
# With the CUPTI timer: no sampler thread beside CUPTI (a thread reading NVML and the driver
# while CUPTI traced was seen to hang a program on an H100); one reading, at exit.
CUPTI=$FAKE_DIR/libcupti.so.13
run_ktime qc $NV KTIME_TIMER=cupti KTIME_CUPTI_LIB="$CUPTI" KTIME_OUTPUT="$tmp/qc.json" \
    FAKE_NVML_LOG="$tmp/qc.log" FAKE_NVML_OTHER_PIDS=$$ "$A" k=125000:30
check "cupti timer: conditions checked, the CUPTI timer timing" \
    sh -c "'$JCHECK' '$tmp/qc.json' conditions.checked == true && '$JCHECK' '$tmp/qc.json' timer.used == cupti"
check "cupti timer: one reading, at exit" jc "$tmp/qc.json" 'conditions.devices[0].samples' == 1
check "cupti timer: the other process seen at exit" jc "$tmp/qc.json" 'conditions.devices[0].other_process_count' == 1
check "cupti timer: nvmlInit_v2 once, nvmlShutdown last" \
    sh -c "[ \$(grep -c '^nvmlInit_v2\$' '$tmp/qc.log') = 1 ] && [ \"\$(tail -n 1 '$tmp/qc.log')\" = nvmlShutdown ]"
check "cupti timer: kernels still timed exactly" exact "$tmp/qc.json" k 25 125
run_ktime qt $NV KTIME_OUTPUT="$tmp/q.txt" "$A" k=125000:30
check "quiet, text: one line says gpu 0 was idle, clocks not locked, no throttling" \
    grepq "$tmp/q.txt" '^conditions: gpu 0 idle apart from this process; clocks not locked, SM clock 1980 MHz, memory clock 2619 MHz; no throttling; 40 C; [0-9]* readings$'
check "quiet, text: no warning line" nogrep "$tmp/q.txt" '^warning:'
check "quiet, text: nothing on stderr" empty "$tmp/qt.err"

# ---- a second process on the GPU, all the run
run_ktime s $NV KTIME_OUTPUT="$tmp/s.json" FAKE_NVML_OTHER_PIDS=$OTHER "$A" k=125000:30
R=$tmp/s.json
check "shared: same exit status and stdout" same_run b s
check "shared: one other process, by pid and name" \
    sh -c "'$JCHECK' '$R' 'conditions.devices[0].other_process_count' == 1 && '$JCHECK' '$R' 'conditions.devices[0].other_processes[0].pid' == $OTHER && '$JCHECK' '$R' 'conditions.devices[0].other_processes[0].name' == sleep"
check "shared: there at the start and at the end" \
    sh -c "'$JCHECK' '$R' 'conditions.devices[0].other_processes[0].at_start' == true && '$JCHECK' '$R' 'conditions.devices[0].other_processes[0].at_end' == true && '$JCHECK' '$R' 'conditions.devices[0].other_processes_at_start' == 1 && '$JCHECK' '$R' 'conditions.devices[0].other_processes_at_end' == 1"
check "shared: a warning in JSON" jc "$R" 'conditions.warnings[0]' has 'gpu 0 was shared with 1 other process'
run_ktime st $NV KTIME_OUTPUT="$tmp/s.txt" FAKE_NVML_OTHER_PIDS=$OTHER "$A" k=125000:30
check "shared, text: the conditions line names it" \
    grepq "$tmp/s.txt" "^conditions: gpu 0 shared with 1 other process (sleep pid $OTHER); "
check "shared, text: and a warning" grepq "$tmp/s.txt" '^warning: gpu 0 was shared with 1 other process during the run'
check "shared, text: the header lines come before the table" \
    sh -c "[ \$(grep -n '^warning: gpu 0 was shared' '$tmp/s.txt' | cut -d: -f1) -lt \$(grep -n 'Time%' '$tmp/s.txt' | cut -d: -f1) ]"

# A process named with control characters: escaped in the text's lines, as a kernel's name is
# (no line, and no warning, of its own); as it is in the JSON's figures; the same text again
# from the JSON (ktime-render).
for i in 1 2 3 4 5 6 7 8 9 10; do
    [ "$(cat /proc/$NAMED/comm 2>/dev/null)" = "$(printf '\033x\nwarning: pwn')" ] && break
    sleep 0.2
done
run_ktime nm $NV KTIME_OUTPUT="$tmp/nm.json" KTIME_ALSO_OUTPUT="$tmp/nm.txt" FAKE_NVML_OTHER_PIDS=$NAMED \
    "$A" k=125000:30
check "a name with control characters: same exit status and stdout" same_run b nm
check "a name with control characters: escaped on the conditions line" \
    grepq "$tmp/nm.txt" "^conditions: gpu 0 shared with 1 other process (\\\\x1bx\\\\nwarning: pwn pid $NAMED); "
check "a name with control characters: it makes no line of its own, no terminal sequence" \
    sh -c "! grep -q '^warning: pwn' '$tmp/nm.txt' && ! grep -q \"\$(printf '\033')\" '$tmp/nm.txt'"
check "a name with control characters: one warning, the report's own" jc "$tmp/nm.json" 'conditions.warnings|len' == 1
check "a name with control characters: the JSON has the name as it is" \
    sh -c "[ \"\$('$JCHECK' '$tmp/nm.json' 'conditions.devices[0].other_processes[0].name')\" = \"\$(printf '\\033x\\nwarning: pwn')\" ]"
"$E2E_RENDER" --format text "$tmp/nm.json" >"$tmp/nm-r.txt" 2>"$tmp/nm-r.err"
check "a name with control characters: ktime-render of the JSON gives the library's text" \
    cmp "$tmp/nm.txt" "$tmp/nm-r.txt"

# Only at the start (the fake lists it in its first reading only), and in the graphics list.
run_ktime s1 $NV KTIME_OUTPUT="$tmp/s1.json" FAKE_NVML_OTHER_PIDS=$OTHER FAKE_NVML_OTHER_CALLS=1 "$A" k=125000:30
check "gone by the end: at_start true, at_end false; 0 at the end" \
    sh -c "'$JCHECK' '$tmp/s1.json' 'conditions.devices[0].other_processes[0].at_start' == true && '$JCHECK' '$tmp/s1.json' 'conditions.devices[0].other_processes[0].at_end' == false && '$JCHECK' '$tmp/s1.json' 'conditions.devices[0].other_processes_at_end' == 0 && '$JCHECK' '$tmp/s1.json' 'conditions.devices[0].other_process_count' == 1"
run_ktime g $NV KTIME_OUTPUT="$tmp/g.json" FAKE_NVML_GRAPHICS_PIDS=$OTHER "$A" k=125000:30
check "a graphics process counts too" jc "$tmp/g.json" 'conditions.devices[0].other_processes[0].pid' == $OTHER

# Another pid namespace: NVML's pids (ours too) are not this namespace's.
run_ktime ns $NV KTIME_OUTPUT="$tmp/ns.json" FAKE_NVML_OTHER_PIDS=$OTHER FAKE_NVML_PID_OFFSET=4194304 "$A" k=125000:30
R=$tmp/ns.json
check "other pid namespace: counted, not named" \
    sh -c "'$JCHECK' '$R' 'conditions.devices[0].pids_of_another_namespace' == true && '$JCHECK' '$R' 'conditions.devices[0].other_process_count' == 1 && '$JCHECK' '$R' 'conditions.devices[0].other_processes' == null"
run_ktime nst $NV KTIME_OUTPUT="$tmp/ns.txt" FAKE_NVML_PID_OFFSET=4194304 "$A" k=125000:30
check "other pid namespace, alone: idle apart from this process" \
    grepq "$tmp/ns.txt" '^conditions: gpu 0 idle apart from this process'

# ---- two GPUs: NVML's devices found by PCI bus id, not by index (the fake reverses them)
run_plain b2 FAKECUDA_DEVICES=2 "$D" --devices 2 k_d=125000:20
run_ktime d2 $NV KTIME_OUTPUT="$tmp/d2.txt" FAKECUDA_DEVICES=2 FAKE_NVML_OTHER_PIDS=$OTHER \
    FAKE_NVML_OTHER_BUS=0000:02:00.0 FAKE_NVML_LOG="$tmp/d2.log" "$D" --devices 2 k_d=125000:20
check "two GPUs: same exit status and stdout" same_run b2 d2
check "two GPUs: gpu 1 (bus 02) is the shared one" grepq "$tmp/d2.txt" "^conditions: gpu 1 shared with 1 other process (sleep pid $OTHER)"
check "two GPUs: gpu 0 idle" grepq "$tmp/d2.txt" '^conditions: gpu 0 idle apart from this process'
check "two GPUs: both found by PCI bus id" \
    sh -c "grep -q '^bus 0000:01:00.0\$' '$tmp/d2.log' && grep -q '^bus 0000:02:00.0\$' '$tmp/d2.log'"
run_ktime uu $NV KTIME_OUTPUT="$tmp/uu.json" FAKECUDA_DEVICES=2 FAKE_NVML_OTHER_PIDS=$OTHER \
    FAKE_NVML_OTHER_BUS=0000:02:00.0 FAKE_NVML_FAIL=nvmlDeviceGetHandleByPciBusId_v2 FAKE_NVML_LOG="$tmp/uu.log" \
    "$D" --devices 2 k_d=125000:20
check "no PCI lookup: found by UUID instead, the same devices" \
    sh -c "grep -q '^uuid GPU-' '$tmp/uu.log' && '$JCHECK' '$tmp/uu.json' 'conditions.devices[ordinal=1].other_process_count' == 1 && '$JCHECK' '$tmp/uu.json' 'conditions.devices[ordinal=0].other_process_count' == 0"

# ---- clocks, throttling, temperature, persistence
# Events complete 20 ms after they are recorded, so that the run lasts long enough for its
# throttling time to show in the JSON's milliseconds (a fast machine ran it in under 0.5 ms).
run_ktime c $NV KTIME_OUTPUT="$tmp/c.json" FAKE_NVML_SM_CLOCKS=1410,1980 FAKE_NVML_MEM_CLOCKS=1593,2619 \
    FAKE_NVML_TEMP=45,71 FAKE_NVML_PERSISTENCE=0 FAKE_NVML_REASONS=0x4 FAKECUDA_COMPLETE_DELAY_US=20000 \
    "$A" k=125000:30
R=$tmp/c.json
check "clocks: SM 1410 to 1980 MHz, memory 1593 to 2619 MHz" \
    sh -c "'$JCHECK' '$R' 'conditions.devices[0].clocks.sm_min_mhz' == 1410 && '$JCHECK' '$R' 'conditions.devices[0].clocks.sm_max_mhz' == 1980 && '$JCHECK' '$R' 'conditions.devices[0].clocks.mem_min_mhz' == 1593 && '$JCHECK' '$R' 'conditions.devices[0].clocks.mem_max_mhz' == 2619"
check "temperature 45 to 71 C" \
    sh -c "'$JCHECK' '$R' 'conditions.devices[0].temperature.min_c' == 45 && '$JCHECK' '$R' 'conditions.devices[0].temperature.max_c' == 71"
check "persistence mode off" jc "$R" 'conditions.devices[0].persistence_mode' == false
check "power throttling: seen, timed, nothing thermal" \
    sh -c "'$JCHECK' '$R' 'conditions.devices[0].throttle.reasons_seen[0]' == sw_power_cap && '$JCHECK' '$R' 'conditions.devices[0].throttle.power_s' '>' 0 && '$JCHECK' '$R' 'conditions.devices[0].throttle.sw_power_cap_s' '>' 0 && '$JCHECK' '$R' 'conditions.devices[0].throttle.thermal_s' == 0"
check "power throttling and persistence off: warnings" \
    sh -c "'$JCHECK' '$R' 'conditions.warnings[0]' has 'clocks were slowed (sw_power_cap' && '$JCHECK' '$R' 'conditions.warnings[1]' has 'persistence mode off'"
run_ktime ct $NV KTIME_OUTPUT="$tmp/c.txt" FAKE_NVML_SM_CLOCKS=1410,1980 FAKE_NVML_TEMP=45,71 \
    FAKE_NVML_PERSISTENCE=0 FAKE_NVML_REASONS=0x40 "$A" k=125000:30
check "thermal, text: the line gives the range, the throttling, the temperatures" \
    grepq "$tmp/c.txt" '^conditions: gpu 0 idle apart from this process; clocks not locked, SM clock 1410-1980 MHz, memory clock 2619 MHz; thermal throttling [0-9.]* m*s; 45-71 C; persistence mode off; '
check "thermal, text: warning" grepq "$tmp/c.txt" "^warning: gpu 0's clocks were slowed (hw_thermal "
run_ktime l $NV KTIME_OUTPUT="$tmp/l.json" FAKE_NVML_APP_CLOCK=1410 FAKE_NVML_SM_CLOCKS=1410 "$A" k=125000:30
check "application clocks set: clocks locked at 1410 MHz, and why" \
    sh -c "'$JCHECK' '$tmp/l.json' 'conditions.devices[0].clocks.locked' == true && '$JCHECK' '$tmp/l.json' 'conditions.devices[0].clocks.application_sm_mhz' == 1410 && '$JCHECK' '$tmp/l.json' 'conditions.devices[0].clocks.locked_evidence' has 'default 1980'"
run_ktime lt $NV KTIME_OUTPUT="$tmp/l.txt" FAKE_NVML_APP_CLOCK=1410 FAKE_NVML_SM_CLOCKS=1410 "$A" k=125000:30
check "application clocks set, text: clocks locked at 1410 MHz" grepq "$tmp/l.txt" '; clocks locked at 1410 MHz, SM clock 1410 MHz'
run_ktime lr $NV KTIME_OUTPUT="$tmp/lr.json" FAKE_NVML_REASONS=0x2 "$A" k=125000:30
check "the applications-clocks reason: locked, not slowed" \
    sh -c "'$JCHECK' '$tmp/lr.json' 'conditions.devices[0].clocks.locked' == true && '$JCHECK' '$tmp/lr.json' 'conditions.warnings|len' == 0"

# ---- MPS
mkdir "$tmp/mps" && mkfifo "$tmp/mps/control"
run_ktime m KTIME_NVML_LIB="$NVML" CUDA_MPS_PIPE_DIRECTORY="$tmp/mps" KTIME_OUTPUT="$tmp/m.json" "$A" k=125000:30
check "MPS control pipe: active, the pipe is the evidence" \
    sh -c "'$JCHECK' '$tmp/m.json' conditions.mps.active == true && '$JCHECK' '$tmp/m.json' conditions.mps.evidence has '$tmp/mps/control'"
run_ktime mt KTIME_NVML_LIB="$NVML" CUDA_MPS_PIPE_DIRECTORY="$tmp/mps" KTIME_OUTPUT="$tmp/m.txt" "$A" k=125000:30
check "MPS, text: a warning" grepq "$tmp/m.txt" '^warning: this process ran under MPS (an MPS control daemon'
run_ktime ms $NV KTIME_OUTPUT="$tmp/ms.json" FAKE_NVML_OTHER_PIDS=$MPSD "$A" k=125000:30
check "an MPS server on the GPU: active, named" jc "$tmp/ms.json" conditions.mps.evidence has "an MPS server (nvidia-cuda-mps, pid $MPSD) runs on gpu 0"
run_ktime mc $NV KTIME_OUTPUT="$tmp/mc.json" FAKE_NVML_MPS_SELF=1 "$A" k=125000:30
check "listed as an MPS client: active" jc "$tmp/mc.json" conditions.mps.evidence has 'MPS client of gpu 0'

# ---- not checked, and failures: the program never notices
run_ktime off KTIME_NVML=0 $NV KTIME_OUTPUT="$tmp/off.txt" FAKE_NVML_LOG="$tmp/off.log" "$A" k=125000:30
check "KTIME_NVML=0: same exit status and stdout" same_run b off
check "KTIME_NVML=0: not checked, says why" grepq "$tmp/off.txt" '^conditions: not checked (KTIME_NVML=0)$'
check "KTIME_NVML=0: NVML never called" absent "$tmp/off.log"
run_ktime offj KTIME_NVML=0 KTIME_OUTPUT="$tmp/off.json" "$A" k=125000:30
check "KTIME_NVML=0, JSON: checked false, reason" \
    sh -c "'$JCHECK' '$tmp/off.json' conditions.checked == false && '$JCHECK' '$tmp/off.json' conditions.reason == KTIME_NVML=0"
run_ktime nolib KTIME_NVML_LIB="$tmp/none/libnvidia-ml.so.1" KTIME_OUTPUT="$tmp/nolib.txt" "$A" k=125000:30
check "no such library: same exit status and stdout" same_run b nolib
check "no such library: not checked (no ...)" grepq "$tmp/nolib.txt" "^conditions: not checked (no $tmp/none/libnvidia-ml.so.1)\$"
check "no such library: still timed exactly" sh -c "grep -q '^ 100.00 ' '$tmp/nolib.txt'"
if ldconfig -p 2>/dev/null | grep -q 'libnvidia-ml\.so\.1 '; then
    skip "no libnvidia-ml on the machine: not checked (no libnvidia-ml.so.1)" "this machine has one"
else
    run_ktime nodef KTIME_OUTPUT="$tmp/nodef.txt" "$A" k=125000:30
    check "no libnvidia-ml on the machine: not checked (no libnvidia-ml.so.1)" \
        grepq "$tmp/nodef.txt" '^conditions: not checked (no libnvidia-ml.so.1)$'
fi
run_ktime fi $NV KTIME_OUTPUT="$tmp/fi.json" FAKE_NVML_FAIL=nvmlInit_v2 "$A" k=125000:30
check "nvmlInit_v2 fails: same exit status and stdout" same_run b fi
check "nvmlInit_v2 fails: not checked, with NVML's error" jc "$tmp/fi.json" conditions.reason == 'nvmlInit_v2 failed: Unknown Error'
FAILS=nvmlDeviceGetComputeRunningProcesses_v3,nvmlDeviceGetGraphicsRunningProcesses_v3,nvmlDeviceGetMPSComputeRunningProcesses_v3,nvmlDeviceGetClockInfo,nvmlDeviceGetApplicationsClock,nvmlDeviceGetDefaultApplicationsClock,nvmlDeviceGetCurrentClocksEventReasons,nvmlDeviceGetTemperature,nvmlDeviceGetPersistenceMode,nvmlDeviceGetComputeMode
run_ktime fq $NV KTIME_OUTPUT="$tmp/fq.json" FAKE_NVML_FAIL=$FAILS "$A" k=125000:30
R=$tmp/fq.json
check "every query fails: same exit status and stdout" same_run b fq
check "every query fails: each figure null (not checked)" \
    sh -c "for q in other_processes other_process_count clocks.locked clocks.sm_min_mhz clocks.mem_max_mhz throttle temperature persistence_mode compute_mode; do '$JCHECK' '$R' \"conditions.devices[0].\$q\" == null || exit 1; done"
run_ktime fqt $NV KTIME_OUTPUT="$tmp/fq.txt" FAKE_NVML_FAIL=$FAILS "$A" k=125000:30
check "every query fails, text: says not checked" \
    grepq "$tmp/fq.txt" '^conditions: gpu 0 other processes not checked; clock locks not checked; throttling not checked; [0-9]* readings$'
run_ktime nd $NV KTIME_OUTPUT="$tmp/nd.txt" FAKE_NVML_DEVICES=0 "$A" k=125000:30
check "no NVML device for the GPU: gpu 0 not checked, why" \
    grepq "$tmp/nd.txt" '^conditions: gpu 0 not checked (no NVML device for its PCI bus id 0000:01:00.0 or UUID (Not Found))$'
# A hung NVML: the exit waits at most max(KTIME_EXIT_WAIT_MS, 500 ms) for it.
run_ktime hang $NV KTIME_OUTPUT="$tmp/hang.txt" KTIME_EXIT_WAIT_MS=100 FAKE_NVML_INIT_DELAY_MS=30000 "$A" k=125000:30
check "NVML hangs in nvmlInit_v2: same exit status and stdout" same_run b hang
check "NVML hangs: not checked, and why" grepq "$tmp/hang.txt" '^conditions: not checked (NVML did not answer within 500 ms)$'
check "NVML hangs: one warning on stderr" \
    sh -c "[ \$(wc -l <'$tmp/hang.err') = 1 ] && grep -q '^ktime: warning: NVML did not answer within 500 ms' '$tmp/hang.err'"
check "NVML hangs: the kernels still timed exactly" sh -c "grep -q '^ 100.00 .* 125.000 .* k\$' '$tmp/hang.txt'"

finish
