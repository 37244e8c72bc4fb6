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
    run_ktime k $FORK_ENV $env KTIME_OUTPUT="$tmp/r.json" KTIME_WARMUP=0 FAKECUDA_COUNT_FILE="$tmp/f.cnt" \
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
    run_ktime k2 $FORK_ENV $env KTIME_FORMAT=json "$E2E_BIN/app_fork" 10 5 7
    check "$l: exactly one report (stderr holds one JSON document)" jc "$tmp/k2.err" 'kernels[mangled=fk_parent].calls' == 17
done

# A child forked after ktime took SIGTERM (for the report) gets the default action back:
# it dies of SIGTERM at once instead of waiting for a drain thread it does not have.
run_plain fsb "$E2E_BIN/app_forksig"
# shellcheck disable=SC2086
run_ktime fsk $FORK_ENV KTIME_OUTPUT="$tmp/fs.json" KTIME_WARMUP=0 "$E2E_BIN/app_forksig"
check "forked child: ends by SIGTERM without ktime" grep -qx "child ended by signal 15" "$tmp/fsb.out"
check "forked child: ends by SIGTERM under ktime too" grep -qx "child ended by signal 15" "$tmp/fsk.out"
check "forked child: the parent's report is still written" jc "$tmp/fs.json" 'kernels[mangled=k].timed' == 20

finish
