#!/bin/sh
# job.sh - the job report (src/modules/job.c): four fake ranks of one job run at once with
# KTIME_OUTPUT naming the rank; rank 0 waits for the others' reports and writes the job
# report at the name with %r as "all", equal byte for byte to `ktime merge` of the four
# reports; rank 2, made slower with the fake driver's exact times while the others spend their
# time in an NCCL-named kernel, is named the straggler; a rank without a report is named within
# KTIME_JOB_WAIT; another job's report and an old one at a rank's name are not taken; a text
# report gets its JSON beside it and a text job report; KTIME_JOB_WAIT=0 makes none. Each
# program's output and exit status are those of the same run without ktime. TAP.
. "$(dirname "$0")/lib.sh"
need_ktime

SRC=$(cd "$(dirname "$0")/../.." && pwd)
TOOL=$SRC/tools/ktime_tool.py
if [ -z "${PYTHON:-}" ] && [ -x /usr/bin/python3 ]; then PYTHON=/usr/bin/python3; fi
PY=${PYTHON:-python3}
KTIME_RENDER=$E2E_RENDER
[ -x "$KTIME_RENDER" ] || e2e_fail_setup "ktime-render not built: $KTIME_RENDER (set BUILD_DIR)"
export KTIME_RENDER
A=$E2E_BIN/app_cudart

# plan R: rank R's kernels. Each rank computes in gemm and waits in an NCCL all-reduce; rank
# 2 computes twice as long (500 us a launch), and the others' all-reduce waits for it (300 us
# against its 50 us). 20 launches each, the first 5 warmup: 15 timed.
plan() {
    if [ "$1" = 2 ]; then echo "gemm=500000:20 ncclDevKernel_AllReduce_Sum_f32_RING_LL=50000:20"
    else echo "gemm=250000:20 ncclDevKernel_AllReduce_Sum_f32_RING_LL=300000:20"; fi
}

# ranks TAG N WS VAR=VALUE...: ranks 0 .. N-1 of a job of WS at once, each run_ktime TAG-R.
ranks() {
    _tag=$1 _n=$2 _ws=$3
    shift 3
    _r=0
    while [ $_r -lt "$_n" ]; do
        # shellcheck disable=SC2046
        run_ktime "$_tag-$_r" RANK=$_r LOCAL_RANK=$_r WORLD_SIZE=$_ws "$@" "$A" $(plan $_r) &
        _r=$((_r + 1))
    done
    wait
}

# The same programs without ktime, for their output and exit status.
for r in 0 1 2 3; do
    # shellcheck disable=SC2046
    run_plain "plain-$r" RANK=$r WORLD_SIZE=4 "$A" $(plan $r)
done
same_ranks() { # TAG N
    _r=0
    while [ $_r -lt "$2" ]; do
        same_run "plain-$_r" "$1-$_r" || return 1
        _r=$((_r + 1))
    done
}

# --- four ranks, one slower -------------------------------------------------------------
ranks full 4 4 KTIME_OUTPUT="$tmp/j-%r.json" KTIME_JOB=e2e-1 KTIME_JOB_WAIT=60
check "four ranks: each program's output and exit status as without ktime" same_ranks full 4
check "four ranks: the job report at the name with %r as all" test -s "$tmp/j-all.json"
check "... and no other file (the ranks' reports, the job's)" \
    sh -c "[ \"\$(cd '$tmp' && ls j-*)\" = \"\$(printf 'j-0.json\nj-1.json\nj-2.json\nj-3.json\nj-all.json')\" ]"
"$PY" "$TOOL" merge "$tmp/j-0.json" "$tmp/j-1.json" "$tmp/j-2.json" "$tmp/j-3.json" -o "$tmp/jm.json" 2>"$tmp/jm.err"
check "four ranks: the job report is ktime merge of the four reports, byte for byte" cmp "$tmp/j-all.json" "$tmp/jm.json"
# names_job PREFIX SUFFIX JOB: each rank's report PREFIX-R.SUFFIX names the job.
names_job() {
    for _r in 0 1 2 3; do "$JCHECK" "$1-$_r.$2" job == "$3" || return 1; done
}
check "four ranks: each rank's report names the job" names_job "$tmp/j" json e2e-1
check "four ranks: 4 of 4 merged, none missing" \
    sh -c "'$JCHECK' '$tmp/j-all.json' balance.ranks == 4 && '$JCHECK' '$tmp/j-all.json' balance.world_size == 4 && '$JCHECK' '$tmp/j-all.json' 'balance.missing|len' == 0"
check "four ranks: rank 2 is the straggler (compute 7.5 ms, the median 3.75 ms; NCCL 0.75 ms, the others 4.5 ms)" \
    sh -c "'$JCHECK' '$tmp/j-all.json' balance.verdict == straggler && '$JCHECK' '$tmp/j-all.json' balance.slowest.rank == 2 &&
           '$JCHECK' '$tmp/j-all.json' balance.slowest.compute_ms '~' 7.5 1e-9 && '$JCHECK' '$tmp/j-all.json' balance.compute_median_ms '~' 3.75 1e-9 &&
           '$JCHECK' '$tmp/j-all.json' balance.slowest.nccl_ms '~' 0.75 1e-6 && '$JCHECK' '$tmp/j-all.json' balance.nccl_median_ms '~' 4.5 1e-6"
check "four ranks: gemm's slowest rank is 2 (7.5 ms), its fastest 3.75 ms, 60 % over the mean of the ranks" \
    sh -c "'$JCHECK' '$tmp/j-all.json' 'kernels[mangled=gemm].rank_spread.slowest.rank' == 2 &&
           '$JCHECK' '$tmp/j-all.json' 'kernels[mangled=gemm].rank_spread.fastest.total_ms' '~' 3.75 1e-9 &&
           '$JCHECK' '$tmp/j-all.json' 'kernels[mangled=gemm].rank_spread.imbalance' '~' 0.6 1e-12"
check "four ranks: rank 0 says where the job report is and the verdict, once" \
    sh -c "[ \"\$(cat '$tmp/full-0.err')\" = 'ktime: job report written to $tmp/j-all.json (4 of 4 ranks; straggler: rank 2)' ]"
check "four ranks: the other ranks say nothing" sh -c "[ ! -s '$tmp/full-1.err' ] && [ ! -s '$tmp/full-2.err' ] && [ ! -s '$tmp/full-3.err' ]"
"$KTIME_RENDER" "$tmp/j-all.json" >"$tmp/j-all.txt"
check "four ranks: its text names the straggler" grep -q '^verdict  straggler: rank 2 (its compute +100.0% over the median rank' "$tmp/j-all.txt"

# --- a rank without a report ------------------------------------------------------------
ranks miss 3 4 KTIME_OUTPUT="$tmp/m-%r.json" KTIME_JOB=e2e-2 KTIME_JOB_WAIT=2
check "rank 3 never ran: rank 0 waited KTIME_JOB_WAIT (2 s) and ended within it + 5 s" \
    sh -c "[ \$(cat '$tmp/miss-0.ms') -ge 2000 ] && [ \$(cat '$tmp/miss-0.ms') -lt 7000 ]"
check "rank 3 never ran: its output and exit status as without ktime" same_ranks miss 3
check "rank 3 never ran: the job report of 3, rank 3 named missing" \
    sh -c "'$JCHECK' '$tmp/m-all.json' balance.ranks == 3 && '$JCHECK' '$tmp/m-all.json' 'balance.missing|len' == 1 && '$JCHECK' '$tmp/m-all.json' 'balance.missing[0]' == 3"
check "rank 3 never ran: still, rank 2 is the straggler" "$JCHECK" "$tmp/m-all.json" balance.verdict == straggler
check "rank 3 never ran: rank 0 names it on stderr" \
    grep -qx "ktime: warning: job report: no report of rank 3 within KTIME_JOB_WAIT=2 s (looked for $tmp/m-\\*.json)" "$tmp/miss-0.err"
"$KTIME_RENDER" "$tmp/m-all.json" >"$tmp/m-all.txt"
check "rank 3 never ran: the text says so" grep -q '^ranks    3 of 4 merged; missing: rank 3$' "$tmp/m-all.txt"

# --- reports that are not this job's ---------------------------------------------------
# At rank 3's name: another job's report, and then this job's from an earlier run (its end
# time moved back to 2001).
run_ktime other3 RANK=3 WORLD_SIZE=4 KTIME_OUTPUT="$tmp/o-%r.json" KTIME_JOB=another KTIME_JOB_WAIT=0 "$A" gemm=250000:20
ranks other 3 4 KTIME_OUTPUT="$tmp/o-%r.json" KTIME_JOB=e2e-3 KTIME_JOB_WAIT=1
check "another job's report at rank 3's name is not taken: rank 3 missing" \
    sh -c "'$JCHECK' '$tmp/o-all.json' balance.ranks == 3 && '$JCHECK' '$tmp/o-all.json' 'balance.missing[0]' == 3"
run_ktime old3 RANK=3 WORLD_SIZE=4 KTIME_OUTPUT="$tmp/s-%r.json" KTIME_JOB=e2e-4 KTIME_JOB_WAIT=0 "$A" gemm=250000:20
sed 's/^  "end_time": "[^"]*"/  "end_time": "2001-01-01T00:00:00.000Z"/' "$tmp/s-3.json" >"$tmp/s-3.tmp" && mv "$tmp/s-3.tmp" "$tmp/s-3.json"
ranks stale 3 4 KTIME_OUTPUT="$tmp/s-%r.json" KTIME_JOB=e2e-4 KTIME_JOB_WAIT=1
check "this job's report of an earlier run at rank 3's name is not taken: rank 3 missing" \
    sh -c "'$JCHECK' '$tmp/s-all.json' balance.ranks == 3 && '$JCHECK' '$tmp/s-all.json' 'balance.missing[0]' == 3"
check "... and the file is left as it was" grep -q '"end_time": "2001-01-01T00:00:00.000Z"' "$tmp/s-3.json"

# --- text reports ------------------------------------------------------------------------
ranks text 4 4 KTIME_OUTPUT="$tmp/t-%r.txt" KTIME_JOB=e2e-5 KTIME_JOB_WAIT=60
text_reports() {
    for _r in 0 1 2 3; do grep -q '^  Time%' "$tmp/t-$_r.txt" || return 1; done
    names_job "$tmp/t" txt.json e2e-5
}
check "text: each rank's text report, and its JSON beside it" text_reports
check "text: the job report in text, naming the straggler" grep -q '^verdict  straggler: rank 2 ' "$tmp/t-all.txt"
"$PY" "$TOOL" merge "$tmp/t-0.txt.json" "$tmp/t-1.txt.json" "$tmp/t-2.txt.json" "$tmp/t-3.txt.json" -o "$tmp/tm.json"
check "text: the job report's JSON beside it is ktime merge of the ranks' JSON, byte for byte" cmp "$tmp/t-all.txt.json" "$tmp/tm.json"
"$KTIME_RENDER" "$tmp/tm.json" >"$tmp/tm.txt"
check "text: the job report's text is ktime report of that merge" cmp "$tmp/t-all.txt" "$tmp/tm.txt"

# --- no job report --------------------------------------------------------------------------
ranks off 4 4 KTIME_OUTPUT="$tmp/x-%r.json" KTIME_JOB=e2e-6 KTIME_JOB_WAIT=0
check "KTIME_JOB_WAIT=0: the ranks' reports and no job report" \
    sh -c "[ -s '$tmp/x-0.json' ] && [ -s '$tmp/x-3.json' ] && [ ! -e '$tmp/x-all.json' ] && [ ! -s '$tmp/off-0.err' ]"
run_ktime one RANK=0 WORLD_SIZE=1 KTIME_OUTPUT="$tmp/y-%r.json" "$A" gemm=250000:20
check "a job of one process: no job report" sh -c "[ -s '$tmp/y-0.json' ] && [ ! -e '$tmp/y-all.json' ]"
run_ktime nor RANK=0 WORLD_SIZE=4 KTIME_OUTPUT="$tmp/z-%p.json" KTIME_JOB_WAIT=1 "$A" gemm=250000:20
check "KTIME_OUTPUT without %r: no job report, no wait" sh -c "[ ! -e '$tmp/z-all.json' ] && [ ! -s '$tmp/nor.err' ]"
finish
