#!/bin/sh
# fork.sh - a forked child inherits ktime's state and atexit handlers; only the parent may
# write a report. TAP.
. "$(dirname "$0")/lib.sh"
need_ktime

for env in "" FAKECUDA_FORK_CHILD_FAILS=1; do
    l="fork${env:+ ($env)}"
    # shellcheck disable=SC2086
    run_plain b $env "$E2E_BIN/app_fork" 10 5 7
    rm -f "$tmp/r.json" "$tmp/f.cnt"
    # shellcheck disable=SC2086
    run_ktime k $env KTIME_OUTPUT="$tmp/r.json" KTIME_WARMUP=0 FAKECUDA_COUNT_FILE="$tmp/f.cnt" \
        "$E2E_BIN/app_fork" --pidfile "$tmp/pid" 10 5 7
    check "$l: same exit status and stdout" same_run b k
    check "$l: nothing on stderr" empty "$tmp/k.err"
    check "$l: the report is the parent's" jc "$tmp/r.json" pid == "$(cat "$tmp/pid")"
    check "$l: parent launches counted (17)" jc "$tmp/r.json" 'kernels[mangled=fk_parent].calls' == 17
    check "$l: parent launches timed exactly" exact "$tmp/r.json" fk_parent 17 125
    check "$l: the child's launches are not in the parent's report" sh -c "! '$JCHECK' '$tmp/r.json' 'kernels[mangled=fk_child]' >/dev/null"
    check "$l: every launch in exactly one bucket" accounting "$tmp/r.json"

    # Report to stderr as JSON: two reports would make it invalid.
    # shellcheck disable=SC2086
    run_ktime k2 $env KTIME_FORMAT=json "$E2E_BIN/app_fork" 10 5 7
    check "$l: exactly one report (stderr holds one JSON document)" jc "$tmp/k2.err" 'kernels[mangled=fk_parent].calls' == 17
done

finish
