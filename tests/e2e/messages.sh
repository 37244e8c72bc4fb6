#!/bin/sh
# messages.sh - what the library says to its user: a report file that cannot be made (a
# reason with a verb), placeholder warnings naming the setting they belong to, KTIME_SAMPLE
# under the CUPTI timer, two processes replacing one report file, KTIME_OUTPUT=- (standard
# output); the text report's words for KTIME_WARMUP=0 and 1, sampling (the method line, each
# row's estimated total), a kernel all of whose launches were warmup, one range; and NVML's
# start-up kept out of the program's ranges. TAP.
. "$(dirname "$0")/lib.sh"
need_ktime

A=$E2E_BIN/app_cudart
NVML=$FAKE_DIR/nvml/libnvidia-ml.so.1

# warned NAME TEXT: exactly one ktime warning on stderr, and it is TEXT.
warned() {
    _w=$(grep '^ktime: warning:' "$tmp/$1.err")
    [ "$(grep -c '^ktime: warning:' "$tmp/$1.err")" = 1 ] && [ "$_w" = "ktime: warning: $2" ] && return 0
    echo "want exactly: ktime: warning: $2"
    echo "stderr:"
    head -n 20 "$tmp/$1.err"
    return 1
}
# has NAME TEXT: stderr holds the fixed line TEXT.
has() {
    grep -qxF -- "$2" "$tmp/$1.err" && return 0
    echo "no line '$2' in:"
    head -n 30 "$tmp/$1.err"
    return 1
}
# lacks NAME TEXT: stderr holds no line containing TEXT.
lacks() {
    ! grep -qF -- "$2" "$tmp/$1.err" && return 0
    echo "'$2' found:"
    grep -F -- "$2" "$tmp/$1.err"
    return 1
}

# --- files that cannot be made: the reason has a verb -----------------------------------------
run_plain base "$A" k=250000:20
run_ktime nodir KTIME_OUTPUT="$tmp/nodir/r.txt" "$A" k=250000:20
check "KTIME_OUTPUT in a folder that does not exist: same stdout and status" same_run base nodir
check "... one warning: 'cannot be created: No such file or directory'" warned nodir \
    "KTIME_OUTPUT '$tmp/nodir/r.txt' cannot be created: No such file or directory; the report follows on stderr"
check "... the report on stderr" grep -q '^launches 20 seen: 15 timed' "$tmp/nodir.err"
run_ktime dumpdir KTIME_DUMP_SAMPLES="$tmp/nodir/s.txt" KTIME_OUTPUT="$tmp/dd.json" "$A" k=250000:20
check "KTIME_DUMP_SAMPLES in a folder that does not exist: one warning with a verb" warned dumpdir \
    "KTIME_DUMP_SAMPLES '$tmp/nodir/s.txt' cannot be created: No such file or directory; no samples are dumped"

# --- placeholder warnings name the setting, and list every placeholder ------------------------
run_ktime trph KTIME_TRACE="$tmp/t-%x.json" KTIME_OUTPUT="$tmp/trph.json" "$A" k=250000:20
check "a bad placeholder in KTIME_TRACE: the warning names KTIME_TRACE and lists %r %l" warned trph \
    "KTIME_TRACE: '%x' is not a placeholder (placeholders are %p, %h, %r, %l, %q{NAME}, %%); kept as written in '$tmp/t-%x.json'"
run_ktime dsph KTIME_DUMP_SAMPLES="$tmp/s-%q{KTIME_E2E_UNSET}.txt" KTIME_OUTPUT="$tmp/dsph.json" "$A" k=250000:20
check "an unset %q{} in KTIME_DUMP_SAMPLES: the warning names KTIME_DUMP_SAMPLES" warned dsph \
    "KTIME_DUMP_SAMPLES: %q{KTIME_E2E_UNSET}: environment variable KTIME_E2E_UNSET is not set; using an empty string"
run_ktime outph KTIME_OUTPUT="$tmp/o-%y.json" "$A" k=250000:20
check "a bad placeholder in KTIME_OUTPUT: still KTIME_OUTPUT's, with %r %l" warned outph \
    "KTIME_OUTPUT: '%y' is not a placeholder (placeholders are %p, %h, %r, %l, %q{NAME}, %%); kept as written in '$tmp/o-%y.json'"

# --- KTIME_SAMPLE under the CUPTI timer ---------------------------------------------------------
SAMPLE_CUPTI="KTIME_SAMPLE=10 works with the events timer only; with KTIME_TIMER=cupti every kernel is timed from CUPTI's records (it applies only to launches timed with events after another CUPTI client takes CUPTI over)"
run_ktime scupti KTIME_TIMER=cupti KTIME_SAMPLE=10 KTIME_CUPTI_LIB="$FAKE_DIR/libcupti.so.13" \
    KTIME_OUTPUT="$tmp/scupti.json" "$A" k=250000:20
check "KTIME_SAMPLE=10 with KTIME_TIMER=cupti: one warning says it does not apply" warned scupti "$SAMPLE_CUPTI"
check "... and every launch past warmup is timed (by CUPTI)" jc "$tmp/scupti.json" 'kernels[mangled=k].timed' == 15
run_ktime sevents KTIME_SAMPLE=10 KTIME_OUTPUT="$tmp/sevents.json" "$A" k=250000:20
check "KTIME_SAMPLE=10 with events: no such warning" lacks sevents "works with the events timer only"

# --- two processes, one report file -------------------------------------------------------------
# The tree's start is known to a clock tick (10 ms), rounded up so that a report written just
# before the run is never taken for one of it: the first process starts well after that.
printf '#!/bin/sh\nsleep 0.1\n"$@" || exit\nexec "$@"\n' >"$tmp/twice"
chmod +x "$tmp/twice"
run_ktime two KTIME_OUTPUT="$tmp/two.json" "$tmp/twice" "$A" k=250000:20
first=$(sed -n 's/^ktime: warning: .* another process (pid \([0-9]*\)) .*/\1/p' "$tmp/two.err")
check "two processes writing one KTIME_OUTPUT: the second warns, naming the first's pid and %p" warned two \
    "KTIME_OUTPUT '$tmp/two.json' holds the report of another process (pid $first) written during this run, now replaced by this one's: put %p in KTIME_OUTPUT for a file per process (-o 'run-%p.json'), then ktime merge them"
check "... the file holds the second's report, not the first's" sh -c \
    "[ -n '$first' ] && ! '$JCHECK' '$tmp/two.json' pid == '$first' && '$JCHECK' '$tmp/two.json' 'kernels[mangled=k].timed' == 15"
run_ktime twotxt KTIME_OUTPUT="$tmp/two.txt" "$tmp/twice" "$A" k=250000:20
check "... a text report too" sh -c "grep -c '^ktime: warning: KTIME_OUTPUT .* holds the report of another process (pid [0-9]*) written during this run' '$tmp/twotxt.err' | grep -qx 1"
run_ktime twop KTIME_OUTPUT="$tmp/two-%p.json" "$tmp/twice" "$A" k=250000:20
check "with %p: a file per process, no warning" sh -c \
    "[ \$(ls '$tmp'/two-*.json | wc -l) = 2 ] && ! grep -q '^ktime: warning' '$tmp/twop.err'"
run_ktime again1 KTIME_OUTPUT="$tmp/again.json" "$A" k=250000:20
run_ktime again2 KTIME_OUTPUT="$tmp/again.json" "$A" k=250000:20
check "a second run replacing the first run's report: no warning" lacks again2 "another process"

# --- KTIME_OUTPUT=- is standard output -----------------------------------------------------------
run_ktime dash KTIME_OUTPUT=- KTIME_FORMAT=json "$A" k=250000:20
check "KTIME_OUTPUT=-: no file named -" test ! -e ./-
check "KTIME_OUTPUT=-: the program's output, then the report, on stdout" sh -c \
    "head -n 1 '$tmp/dash.out' | grep -qx 'driver 13000' && sed -n '/^{/,\$p' '$tmp/dash.out' >'$tmp/dash.json' && '$JCHECK' '$tmp/dash.json' 'kernels[mangled=k].timed' == 15"

# --- the text report's words -------------------------------------------------------------------
run_ktime w0 KTIME_WARMUP=0 "$A" k=250000:3
check "KTIME_WARMUP=0: 'warmup   none: every launch is timed'" has w0 \
    "warmup   none: every launch is timed, each kernel's first included (KTIME_WARMUP=0)"
check "KTIME_WARMUP=0: never 'the first 0 launches'" lacks w0 "the first 0 launches"
run_ktime w1 KTIME_WARMUP=1 "$A" k=250000:3
check "KTIME_WARMUP=1: 'the first launch of each kernel'" has w1 \
    "warmup   the first launch of each kernel is not timed (KTIME_WARMUP)"
run_ktime samp KTIME_SAMPLE=4 "$A" k=250000:60 j=125000:60
check "KTIME_SAMPLE=4: the method line says one launch in 4, drawn at random" sh -c \
    "grep -qx \"method   a CUDA event pair on the launch's own stream around one launch in 4 after warmup,\" '$tmp/samp.err' && grep -qx '         drawn at random (KTIME_SAMPLE);' '$tmp/samp.err'"
check "KTIME_SAMPLE=4: not 'around every launch'" lacks samp "around every launch"
check "KTIME_SAMPLE=4: each row's total is marked estimated" sh -c \
    "[ \$(grep -cE '  [kj] \\((few samples, )?total estimated\\)\$' '$tmp/samp.err') = 2 ]"
run_ktime every "$A" k=250000:20
check "without sampling: 'around every launch', no row estimated" sh -c \
    "grep -q \"stream around every launch;\$\" '$tmp/every.err' && ! grep -q 'total estimated' '$tmp/every.err'"
run_ktime allw "$A" k=250000:20 j=125000:3
check "a kernel whose launches were all warmup: marked 'all warmup'" sh -c \
    "grep -E '^ +- +- +3 +3 +0 .*  j \\(all warmup\\)\$' '$tmp/allw.err' >/dev/null || { cat '$tmp/allw.err'; exit 1; }"
check "... a kernel with samples is not" sh -c "! grep -q '  k (all warmup' '$tmp/allw.err'"
run_ktime r1 KTIME_CAPTURE=profiler-api KTIME_WARMUP=2 "$A" --profiler 10:20 k_a=125000:25
check "KTIME_CAPTURE with one range: '1 range (1 starts, 1 stops)'" has r1 "         1 range (1 starts, 1 stops)"

# --- NVML's start-up is in no range's time --------------------------------------------------------
# The first launch of app_ranges is inside its ranges "step" and "forward": NVML's thread
# (ktime-nvml) must not exist yet there, and must once the ranges have closed.
R=$E2E_BIN/app_ranges
for how in api: nvtx:--nvtx; do
    n=${how%%:*}
    run_ktime "nv_$n" KTIME_NVTX=1 KTIME_NVML_LIB="$NVML" KTIME_OUTPUT="$tmp/nv_$n.json" "$R" ${how#*:} --threads 3
    check "$n ranges: no NVML thread inside the first range" has "nv_$n" "in range: 0"
    check "$n ranges: the NVML thread once the ranges have closed" has "nv_$n" "after the ranges: 1"
    check "$n ranges: the conditions still read through NVML, more than once" sh -c \
        "'$JCHECK' '$tmp/nv_$n.json' conditions.checked == true && '$JCHECK' '$tmp/nv_$n.json' 'conditions.devices[0].samples' '>=' 2"
done
run_ktime nv_plain KTIME_NVML_LIB="$NVML" KTIME_OUTPUT="$tmp/nv_plain.json" "$A" k=250000:20
check "no range: the conditions read through NVML as before" jc "$tmp/nv_plain.json" conditions.checked == true
finish
