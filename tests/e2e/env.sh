#!/bin/sh
# env.sh - configuration from the environment: bad values warn once and fall back to the
# default without touching the program; KTIME_OUTPUT (and its placeholders) / KTIME_FORMAT /
# KTIME_DISABLE. TAP.
. "$(dirname "$0")/lib.sh"
need_ktime

A=$E2E_BIN/app_cudart
ARGS="k_small=125000:10 k_big=1000000:7"
# shellcheck disable=SC2086
run_plain base "$A" $ARGS

# bad_value VAR VALUE DEFAULT [QUERY WANT]: one warning naming VAR and DEFAULT; program
# untouched; report written with the default in force.
bad_value() {
    rm -f "$tmp/b.json"
    # shellcheck disable=SC2086
    run_ktime bad KTIME_OUTPUT="$tmp/b.json" "$1=$2" "$A" $ARGS
    _l="$1='$2'"
    check "$_l: same exit status and stdout" same_run base bad
    check "$_l: exactly one 'ktime:' line on stderr naming $1 and the default $3" one_warning "$tmp/bad.err" "$1" "$3"
    check "$_l: report still written" jc "$tmp/b.json"
    if [ $# -ge 5 ]; then
        check "$_l: report uses the default" jc "$tmp/b.json" "$4" == "$5"
    fi
}
bad_value KTIME_WARMUP abc 5 warmup 5
bad_value KTIME_WARMUP -3 5 warmup 5
bad_value KTIME_WARMUP 1e99 5 warmup 5
bad_value KTIME_WARMUP "" 5 warmup 5
bad_value KTIME_WARMUP 99999999999999999999999 5 warmup 5
bad_value KTIME_WARMUP "5x" 5 warmup 5
bad_value KTIME_LOG bogus warn
bad_value KTIME_POOL_CAP 0 16384
bad_value KTIME_POOL_CAP -1 16384
bad_value KTIME_EXIT_WAIT_MS -1 2000
bad_value KTIME_EXIT_WAIT_MS soon 2000
bad_value KTIME_FORMAT yaml text

# shellcheck disable=SC2086
run_ktime good KTIME_OUTPUT="$tmp/g.json" KTIME_WARMUP=7 KTIME_LOG=warn KTIME_POOL_CAP=64 KTIME_EXIT_WAIT_MS=50 "$A" $ARGS
check "valid settings: no warning" empty "$tmp/good.err"
check "valid settings: KTIME_WARMUP=7 in force" jc "$tmp/g.json" warmup == 7
check "valid settings: k_small 3 timed" exact "$tmp/g.json" k_small 3 125

# --- where the report goes, and in which format ------------------------------------------
# shellcheck disable=SC2086
run_ktime txt KTIME_OUTPUT="$tmp/r.txt" "$A" $ARGS
check "KTIME_OUTPUT=r.txt: same exit status and stdout" same_run base txt
check "KTIME_OUTPUT=r.txt: nothing on stderr" empty "$tmp/txt.err"
check "KTIME_OUTPUT=r.txt: text, not JSON" sh -c "! '$JCHECK' '$tmp/r.txt' 2>/dev/null"

# text_report FILE: a first line naming ktime, a row per kernel holding its call count, and
# something after the last kernel row (a footer).
text_report() {
    _bad=0
    grep -v '^[[:space:]]*$' "$1" | head -n 1 | grep -qi ktime || { echo "first line does not mention ktime"; _bad=1; }
    for _kv in k_small:10 k_big:7; do
        grep "${_kv%%:*}" "$1" | grep -qw "${_kv#*:}" || { echo "no line with ${_kv%%:*} and its ${_kv#*:} calls"; _bad=1; }
    done
    _last=$(grep -n 'k_small\|k_big' "$1" | tail -n 1 | cut -d: -f1)
    _end=$(grep -n '[^[:space:]]' "$1" | tail -n 1 | cut -d: -f1)
    [ -n "$_last" ] && [ "$_end" -gt "$_last" ] || { echo "nothing after the last kernel row"; _bad=1; }
    [ $_bad = 0 ] || { echo "report:"; head -n 30 "$1"; }
    return $_bad
}
check "KTIME_OUTPUT=r.txt: header, kernel rows, footer" text_report "$tmp/r.txt"

# shellcheck disable=SC2086
run_ktime ft KTIME_OUTPUT="$tmp/f.txt" KTIME_FORMAT=text "$A" $ARGS
check "KTIME_FORMAT=text: header, kernel rows, footer" text_report "$tmp/f.txt"
# shellcheck disable=SC2086
run_ktime fj KTIME_OUTPUT="$tmp/f.out" KTIME_FORMAT=json "$A" $ARGS
check "KTIME_FORMAT=json with any file name: JSON" jc "$tmp/f.out" schema_version == 2
# shellcheck disable=SC2086
run_ktime js KTIME_OUTPUT="$tmp/r.json" "$A" $ARGS
check "KTIME_OUTPUT=*.json: JSON" jc "$tmp/r.json" schema_version == 2

# csv_report FILE: the header, then k_small and k_big, every line CRLF-ended with 39 fields (outside_range, grid, block, shared_bytes, paused, sampled_1_in last)
# (these names need no quoting), and the same counts and sums as the JSON report r.json.
csv_report() {
    _bad=0
    head -n 1 "$1" | grep -q '^name,mangled,kind,device,calls,warmup_skipped,captured,dropped,failed,incomplete,timed,' ||
        { echo "no CSV header"; _bad=1; }
    awk -F, '!/\r$/ { print "line " NR " not CRLF-ended"; bad = 1 } NF != 47 { print "line " NR ": " NF " fields"; bad = 1 } END { exit bad }' "$1" || _bad=1
    [ "$(wc -l <"$1")" -eq 3 ] || { echo "$(wc -l <"$1") lines, want 3"; _bad=1; }
    for _k in k_small k_big; do
        _row=$(awk -F, -v k="$_k" '$2 == k { print $5, $6, $11, $24 }' "$1")
        _want="$(jv "$tmp/r.json" "kernels[mangled=$_k].calls") $(jv "$tmp/r.json" "kernels[mangled=$_k].warmup_skipped") $(jv "$tmp/r.json" "kernels[mangled=$_k].timed")"
        case $_row in
            "$_want "*) ;;
            *) echo "$_k: CSV calls, warmup, timed '$_row', JSON '$_want'"; _bad=1 ;;
        esac
        _sum=${_row##* }
        jc "$tmp/r.json" "kernels[mangled=$_k].sum_us" '~' "$_sum" || _bad=1
    done
    return $_bad
}
# shellcheck disable=SC2086
run_ktime fc KTIME_OUTPUT="$tmp/f.out" KTIME_FORMAT=csv "$A" $ARGS
check "KTIME_FORMAT=csv with any file name: CSV, the JSON report's numbers" csv_report "$tmp/f.out"
# shellcheck disable=SC2086
run_ktime cs KTIME_OUTPUT="$tmp/r.CSV" "$A" $ARGS
check "KTIME_OUTPUT=*.csv (any case): CSV" csv_report "$tmp/r.CSV"
# shellcheck disable=SC2086
run_ktime cj KTIME_OUTPUT="$tmp/r2.csv" KTIME_FORMAT=json "$A" $ARGS
check "KTIME_FORMAT=json beats the .csv name" jc "$tmp/r2.csv" schema_version == 2

# --- KTIME_OUTPUT placeholders: %p, %h, %q{NAME}, %% -------------------------------------
# pid_named DIR N: DIR holds exactly N files, each r-PID.json, a JSON report whose "pid" is
# the PID in its name.
pid_named() {
    _n=0
    _bad=0
    for _f in "$1"/*; do
        [ -e "$_f" ] || continue
        _n=$((_n + 1))
        _b=${_f##*/}
        _p=${_b#r-}
        _p=${_p%.json}
        case $_b:$_p in
            r-*.json:*[!0-9]* | r-*.json:) echo "$_b: '$_p' is not a pid"; _bad=1; continue ;;
            r-*.json:*) ;;
            *) echo "unexpected file $_b"; _bad=1; continue ;;
        esac
        _j=$(jv "$_f" pid)
        [ "$_j" = "$_p" ] || { echo "$_b: JSON pid is '${_j:-missing}', not $_p"; _bad=1; }
    done
    [ "$_n" = "$2" ] || { echo "$_n files in $1, want $2:"; ls -l "$1"; _bad=1; }
    return $_bad
}
mkdir "$tmp/pp"
# shellcheck disable=SC2086
run_ktime pp KTIME_OUTPUT="$tmp/pp/r-%p.json" "$A" $ARGS
check "KTIME_OUTPUT=r-%p.json: same exit status and stdout" same_run base pp
check "KTIME_OUTPUT=r-%p.json: nothing on stderr" empty "$tmp/pp.err"
check "KTIME_OUTPUT=r-%p.json: one file, named with the pid in its report, JSON" pid_named "$tmp/pp" 1
for pp_file in "$tmp"/pp/r-*.json; do break; done
check "KTIME_OUTPUT=r-%p.json: the report is exact" exact "$pp_file" k_small 5 125
# Two programs from one shell, each under ktime (the shell itself writes no report): one
# file each, not one overwriting the other.
mkdir "$tmp/pp2"
run_ktime pp2 KTIME_OUTPUT="$tmp/pp2/r-%p.json" sh -c "'$A' $ARGS && '$A' $ARGS"
check "KTIME_OUTPUT=r-%p.json, two processes: two files, each named with its own pid" pid_named "$tmp/pp2" 2

# shellcheck disable=SC2086
run_ktime qv KTIME_OUTPUT="$tmp/r-%q{SOME_VAR}.json" SOME_VAR=rank3 "$A" $ARGS
check "KTIME_OUTPUT=r-%q{SOME_VAR}.json, SOME_VAR=rank3: same exit status and stdout" same_run base qv
check "KTIME_OUTPUT=r-%q{SOME_VAR}.json, SOME_VAR=rank3: nothing on stderr" empty "$tmp/qv.err"
check "KTIME_OUTPUT=r-%q{SOME_VAR}.json, SOME_VAR=rank3: r-rank3.json, JSON" jc "$tmp/r-rank3.json" schema_version == 2
# shellcheck disable=SC2086
run_ktime qu KTIME_OUTPUT="$tmp/u-%q{KTIME_E2E_UNSET}.json" "$A" $ARGS
check "KTIME_OUTPUT with %q{} of an unset variable: same exit status and stdout" same_run base qu
check "KTIME_OUTPUT with %q{} of an unset variable: one 'ktime:' warning naming it" \
    sh -c "[ \$(wc -l <'$tmp/qu.err') = 1 ] && grep '^ktime:' '$tmp/qu.err' | grep -q KTIME_E2E_UNSET"
check "KTIME_OUTPUT with %q{} of an unset variable: expands to empty" jc "$tmp/u-.json" schema_version == 2

# shellcheck disable=SC2086
run_ktime pc KTIME_OUTPUT="$tmp/100%%-%%p.json" "$A" $ARGS
check "KTIME_OUTPUT=100%%-%%p.json: nothing on stderr" empty "$tmp/pc.err"
check "KTIME_OUTPUT=100%%-%%p.json: a literal % (100%-%p.json), JSON" jc "$tmp/100%-%p.json" schema_version == 2

# shellcheck disable=SC2086
run_ktime ph KTIME_OUTPUT="$tmp/h-%h.json" "$A" $ARGS
check "KTIME_OUTPUT=h-%h.json: named with the host name" jc "$tmp/h-$(uname -n).json" schema_version == 2

# --- %r, %l, and a job of several ranks without KTIME_OUTPUT -----------------------------
# shellcheck disable=SC2086
run_ktime rk KTIME_OUTPUT="$tmp/r%r-l%l.json" RANK=2 LOCAL_RANK=0 WORLD_SIZE=4 "$A" $ARGS
check "%r-%l, torchrun's RANK=2 LOCAL_RANK=0: r2-l0.json, nothing on stderr" \
    sh -c "'$JCHECK' '$tmp/r2-l0.json' schema_version == 2 && [ ! -s '$tmp/rk.err' ]"
check "the JSON names the job: host, rank 2, local rank 0, world size 4" \
    sh -c "[ \"\$('$JCHECK' '$tmp/r2-l0.json' host)\" = '$(uname -n)' ] && '$JCHECK' '$tmp/r2-l0.json' rank == 2 &&
           '$JCHECK' '$tmp/r2-l0.json' local_rank == 0 && '$JCHECK' '$tmp/r2-l0.json' world_size == 4"
check "the JSON has start and end times, ISO 8601 UTC, start before end" \
    sh -c "s=\$('$JCHECK' '$tmp/r2-l0.json' start_time) e=\$('$JCHECK' '$tmp/r2-l0.json' end_time) &&
           echo \"\$s\" | grep -Eq '^20[0-9]{2}-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-6][0-9]\\.[0-9]{3}Z\$' &&
           echo \"\$e\" | grep -Eq 'Z\$' && [ \"\$s\" \\< \"\$e\" -o \"\$s\" = \"\$e\" ]"
check "no launcher's variables: rank, local_rank and world_size are null" \
    sh -c "for q in rank local_rank world_size; do '$JCHECK' '$tmp/r.json' \"\$q|type\" | grep -qx null || exit 1; done"
# shellcheck disable=SC2086
run_ktime ro KTIME_OUTPUT="$tmp/r%r-l%l.json" OMPI_COMM_WORLD_RANK=3 OMPI_COMM_WORLD_LOCAL_RANK=1 "$A" $ARGS
check "%r-%l, Open MPI's variables (rank 3, local 1): r3-l1.json" jc "$tmp/r3-l1.json" schema_version == 2
# shellcheck disable=SC2086
run_ktime rn KTIME_OUTPUT="$tmp/n%r-%l.json" "$A" $ARGS
check "%r-%l with no launcher's variables: norank, never a number (no file n0-0.json)" \
    sh -c "'$JCHECK' '$tmp/nnorank-norank.json' schema_version == 2 && [ ! -e '$tmp/n0-0.json' ]"
host=$(uname -n)
mkdir "$tmp/rd"
# shellcheck disable=SC2086
(cd "$tmp/rd" && run_ktime rd0 RANK=0 WORLD_SIZE=2 "$A" $ARGS && run_ktime rd1 RANK=1 WORLD_SIZE=2 "$A" $ARGS)
check "2 ranks, no KTIME_OUTPUT: each writes ktime-HOST-RANK.txt in its directory" \
    sh -c "[ \$(ls '$tmp/rd' | wc -l) = 2 ] && [ -s '$tmp/rd/ktime-$host-0.txt' ] && [ -s '$tmp/rd/ktime-$host-1.txt' ]"
check "2 ranks, no KTIME_OUTPUT: rank 1's report is a text report" text_report "$tmp/rd/ktime-$host-1.txt"
check "2 ranks, no KTIME_OUTPUT: rank 0 says where, once; rank 1 says nothing" \
    sh -c "[ \$(wc -l <'$tmp/rd0.err') = 1 ] && grep '^ktime:' '$tmp/rd0.err' | grep -q 'ktime-%h-%r.txt' && [ ! -s '$tmp/rd1.err' ]"
check "2 ranks: same exit status and stdout as without ktime" same_run base rd1
mkdir "$tmp/rj"
# shellcheck disable=SC2086
(cd "$tmp/rj" && run_ktime rj KTIME_FORMAT=json OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=3 "$A" $ARGS)
check "3 Open MPI ranks, KTIME_FORMAT=json: ktime-HOST-1.json" jc "$tmp/rj/ktime-$host-1.json" schema_version == 2
mkdir "$tmp/r1"
# shellcheck disable=SC2086
(cd "$tmp/r1" && run_ktime r1 RANK=0 WORLD_SIZE=1 "$A" $ARGS)
check "a job of 1 rank: the report on stderr, no file" sh -c "[ -z \"\$(ls '$tmp/r1')\" ]"
check "a job of 1 rank: stderr holds the text report" text_report "$tmp/r1.err"

# shellcheck disable=SC2086
run_ktime px KTIME_OUTPUT="$tmp/x-%x-%y.json" "$A" $ARGS
check "KTIME_OUTPUT with unknown placeholders: same exit status and stdout" same_run base px
check "KTIME_OUTPUT with unknown placeholders: one 'ktime:' warning naming the first" \
    sh -c "[ \$(wc -l <'$tmp/px.err') = 1 ] && grep '^ktime:' '$tmp/px.err' | grep -q \"'%x'\""
check "KTIME_OUTPUT with unknown placeholders: kept as written" jc "$tmp/x-%x-%y.json" schema_version == 2
# shellcheck disable=SC2086
run_ktime pq KTIME_OUTPUT="$tmp/q-%q{OPEN.json" "$A" $ARGS
check "KTIME_OUTPUT with an unterminated %q{: one 'ktime:' warning" \
    sh -c "[ \$(wc -l <'$tmp/pq.err') = 1 ] && grep -q '^ktime:.*%q{' '$tmp/pq.err'"
check "KTIME_OUTPUT with an unterminated %q{: kept as written" jc "$tmp/q-%q{OPEN.json" schema_version == 2

_long=$(awk 'BEGIN { while (n++ < 5000) printf "x" }')
# shellcheck disable=SC2086
run_ktime pl KTIME_OUTPUT="$tmp/$_long-%p.txt" "$A" $ARGS
check "KTIME_OUTPUT longer than PATH_MAX once expanded: same exit status and stdout" same_run base pl
check "KTIME_OUTPUT longer than PATH_MAX once expanded: a 'ktime:' warning" \
    sh -c "grep '^ktime:' '$tmp/pl.err' | grep -q 'expands to more than'"
check "KTIME_OUTPUT longer than PATH_MAX once expanded: the report goes to stderr instead" text_report "$tmp/pl.err"

# shellcheck disable=SC2086
run_ktime se "$A" $ARGS
check "no KTIME_OUTPUT: same exit status and stdout" same_run base se
check "no KTIME_OUTPUT: text report on stderr" text_report "$tmp/se.err"
# shellcheck disable=SC2086
run_ktime sj KTIME_FORMAT=json "$A" $ARGS
check "no KTIME_OUTPUT, KTIME_FORMAT=json: stderr is exactly one JSON report" jc "$tmp/sj.err" schema_version == 2

rm -f "$tmp/nonexistent"
# shellcheck disable=SC2086
run_ktime bo KTIME_OUTPUT="$tmp/nonexistent/dir/r.txt" "$A" $ARGS
check "unwritable KTIME_OUTPUT: same exit status and stdout" same_run base bo
check "unwritable KTIME_OUTPUT: a 'ktime:' warning naming the path" \
    sh -c "grep '^ktime:' '$tmp/bo.err' | grep -q 'nonexistent/dir/r.txt'"
check "unwritable KTIME_OUTPUT: the report goes to stderr instead" text_report "$tmp/bo.err"
check "unwritable KTIME_OUTPUT: no folder created" absent "$tmp/nonexistent"

# --- KTIME_DISABLE ------------------------------------------------------------------------
# shellcheck disable=SC2086
run_ktime off KTIME_DISABLE=1 KTIME_OUTPUT="$tmp/off.json" FAKECUDA_COUNT_FILE="$tmp/off.cnt" "$A" $ARGS
check "KTIME_DISABLE=1: same exit status and stdout" same_run base off
check "KTIME_DISABLE=1: nothing on stderr" empty "$tmp/off.err"
check "KTIME_DISABLE=1: no report" absent "$tmp/off.json"
check "KTIME_DISABLE=1: no events created or recorded" \
    sh -c "grep -qx 'event_record 0' '$tmp/off.cnt' && grep -qx 'event_create 0' '$tmp/off.cnt'"
check "KTIME_DISABLE=1: every launch still reached the driver" \
    sh -c "grep -qx 'launch k_small 10' '$tmp/off.cnt' && grep -qx 'launch k_big 7' '$tmp/off.cnt'"
# shellcheck disable=SC2086
run_ktime off2 KTIME_DISABLE=1 "$E2E_BIN/app_driver" $ARGS
run_plain base2 "$E2E_BIN/app_driver" $ARGS
check "KTIME_DISABLE=1 with -lcuda: same exit status and stdout, nothing on stderr" \
    sh -c "cmp -s '$tmp/base2.out' '$tmp/off2.out' && [ \$(cat '$tmp/off2.rc') = 0 ] && [ ! -s '$tmp/off2.err' ]"

# --- KTIME_LOG -----------------------------------------------------------------------------
# shellcheck disable=SC2086
run_ktime q KTIME_LOG=quiet KTIME_OUTPUT="$tmp/q.json" "$A" $ARGS
check "KTIME_LOG=quiet: nothing on stderr" empty "$tmp/q.err"
check "KTIME_LOG=quiet: report still written" jc "$tmp/q.json"
# shellcheck disable=SC2086
run_ktime dbg KTIME_LOG=debug KTIME_OUTPUT="$tmp/dbg.json" "$A" $ARGS
check "KTIME_LOG=debug: same exit status and stdout" same_run base dbg
check "KTIME_LOG=debug: every stderr line starts with 'ktime:'" sh -c "! grep -v '^ktime:' '$tmp/dbg.err'"
check "KTIME_LOG=debug: report still written and exact" exact "$tmp/dbg.json" k_small 5 125
# The drain's cost breakdown: one elapsed-time call per timed launch (10 - 5 + 7 - 5), and
# the time inside the calls no more than the passes' wall time.
check "KTIME_LOG=debug: drain counts one elapsed-time call per timed launch" \
    grep -q "drain: [0-9]* passes, [0-9]* event queries ([0-9]* found it pending), 7 elapsed-time calls" "$tmp/dbg.err"
check "KTIME_LOG=debug: drain time inside the driver calls within the passes' wall time" \
    awk '/drain time: passes/ { pass = $6; q = $14; e = $20; found = 1 }
         END { exit !(found && pass > 0 && q + e <= pass) }' "$tmp/dbg.err"

finish
