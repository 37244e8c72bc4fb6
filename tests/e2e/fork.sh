#!/bin/sh
# fork.sh - a forked child inherits ktime's state and atexit handlers: a child of a parent
# that launched is off and only the parent writes a report; the workers of a parent that
# never used CUDA are timed, each under its own pid; an exec after launches writes the report
# first, and the program it runs (same pid) never replaces it with an empty one. TAP.
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

# --- a pool: the parent launches nothing, its forked workers do ----------------------------
# Worker i launches fk_w<i> 4 + i times: each report holds exactly its worker's launches (the
# fake's counts; after _exit the fake writes none, and the worker's own line says), under its
# own pid; the parent writes none.
for mode in exit quick load init; do
    case $mode in
        exit) opt= ;;
        quick) opt=--quick-exit ;; # _exit(), as Python's multiprocessing workers end
        load) opt=--load ;;        # the parent loaded the driver (unused)
        init) opt=--init ;;        # ... and initialised it (the fake lets children use it)
    esac
    l="workers ($mode)"
    d=$tmp/w-$mode
    mkdir "$d"
    # shellcheck disable=SC2086
    run_plain "wb-$mode" "$E2E_BIN/app_fork" --workers 3 4 $opt
    # shellcheck disable=SC2086
    run_ktime "wk-$mode" $FORK_ENV KTIME_OUTPUT="$d/w.%p.json" KTIME_WARMUP=0 \
        FAKECUDA_COUNT_FILE="$tmp/w-$mode.cnt" "$E2E_BIN/app_fork" --workers 3 4 $opt
    check "$l: same exit status and stdout" same_run "wb-$mode" "wk-$mode"
    check "$l: nothing on stderr" empty "$tmp/wk-$mode.err"
    check "$l: three reports, the parent wrote none" sh -c "[ \$(ls '$d' | wc -l) = 3 ]"
    for i in 0 1 2; do
        f=$(grep -l "\"fk_w$i\"" "$d"/*.json 2>/dev/null | head -n 1)
        n=$((4 + i))
        check "$l: worker $i's report: only fk_w$i, $n launches, as the fake counted" \
            sh -c "[ -n '$f' ] && '$JCHECK' '$f' 'kernels|len' == 1 && '$JCHECK' '$f' 'kernels[mangled=fk_w$i].calls' == $n && { [ $mode = quick ] || grep -Eqx '(child )?launch fk_w$i $n' '$tmp/w-$mode.cnt'; }"
        check "$l: worker $i's report: timed exactly, named by its own pid" \
            sh -c "[ -n '$f' ] && [ \"\$(basename '$f')\" = \"w.\$('$JCHECK' '$f' pid).json\" ]" && exact "$f" "fk_w$i" $n 125
    done
    check "$l: three pids" sh -c "[ \$(cat '$d'/*.json | grep -c '\"pid\": ') = 3 ] && [ \$(grep -h '\"pid\": ' '$d'/*.json | sort -u | wc -l) = 3 ]"
done
# The parent used CUDA (initialised it) and the real driver refuses its children: the
# workers' calls fail, ktime says nothing and writes nothing.
mkdir "$tmp/w-broken"
run_plain wb-broken FAKECUDA_FORK_CHILD_FAILS=1 "$E2E_BIN/app_fork" --workers 2 4 --init
run_ktime wk-broken $FORK_ENV FAKECUDA_FORK_CHILD_FAILS=1 KTIME_OUTPUT="$tmp/w-broken/w.%p.json" \
    "$E2E_BIN/app_fork" --workers 2 4 --init
check "workers whose CUDA fails: same exit status and stdout" same_run wb-broken wk-broken
check "workers whose CUDA fails: nothing on stderr, no report" \
    sh -c "[ ! -s '$tmp/wk-broken.err' ] && [ -z \"\$(ls -A '$tmp/w-broken')\" ]"
# No KTIME_OUTPUT: the workers' reports on stderr, one per worker.
run_ktime wk-se $FORK_ENV KTIME_WARMUP=0 KTIME_FORMAT=csv "$E2E_BIN/app_fork" --workers 2 3
check "workers, reports on stderr: one per worker" \
    sh -c "[ \$(grep -c '^name,mangled,' '$tmp/wk-se.err') = 2 ] && grep -q '^fk_w0,fk_w0,kernel,' '$tmp/wk-se.err' && grep -q '^fk_w1,fk_w1,kernel,' '$tmp/wk-se.err'"

# --- exec after launches: the report first; the program exec'd leaves it -----------------
# Each form of the exec family runs app_nocuda (PATH has E2E_BIN for the p forms).
X=$E2E_BIN/app_nocuda
for how in execve execv execvp execvpe execl execlp execle fexecve execveat; do
    case $how in
        execvp | execlp | execvpe) prog=app_nocuda ;;
        *) prog=$X ;;
    esac
    d=$tmp/x-$how
    mkdir "$d"
    run_plain "xb-$how" PATH="$E2E_BIN:$PATH" "$E2E_BIN/app_fork" --exec 7 "$how" "$prog"
    if [ "$(rc_of "xb-$how")" = 77 ]; then
        skip "exec ($how): the report before the exec" "$(cat "$tmp/xb-$how.out" | tail -n 1)"
        continue
    fi
    run_ktime "xk-$how" PATH="$E2E_BIN:$PATH" KTIME_OUTPUT="$d/x.%p.json" KTIME_WARMUP=0 \
        "$E2E_BIN/app_fork" --exec 7 "$how" "$prog"
    f=$(ls "$d"/x.*.json 2>/dev/null | head -n 1)
    check "exec ($how): same exit status and stdout (the exec'd program's too)" same_run "xb-$how" "xk-$how"
    check "exec ($how): one report, written before the exec" \
        sh -c "[ \$(ls '$d' | wc -l) = 1 ] && [ \$(wc -l <'$tmp/xk-$how.written') = 1 ] && [ ! -s '$tmp/xk-$how.err' ]"
    check "exec ($how): it holds the 7 launches, timed exactly" exact "$f" fk_parent 7 125
done
# One file for every process: the program exec'd launches nothing and loads CUDA (same pid),
# and leaves the report as it is.
run_plain xb-idle "$E2E_BIN/app_fork" --exec 7 execv "$E2E_BIN/app_cudart" k_idle=1000:0
run_ktime xk-idle KTIME_OUTPUT="$tmp/x-idle.json" KTIME_WARMUP=0 \
    "$E2E_BIN/app_fork" --exec 7 execv "$E2E_BIN/app_cudart" k_idle=1000:0
check "exec of a CUDA program that launches nothing: same exit status and stdout" same_run xb-idle xk-idle
check "exec of a CUDA program that launches nothing: the report holds the 7 launches" \
    sh -c "'$JCHECK' '$tmp/x-idle.json' 'kernels[mangled=fk_parent].calls' == 7 && '$JCHECK' '$tmp/x-idle.json' totals.launches_seen == 7"
check "... and the exec'd program says it left it" grep -q "^ktime: no CUDA launches seen in app_cudart (pid [0-9]*); $tmp/x-idle.json holds another report, left as it is\$" "$tmp/xk-idle.err"
# No KTIME_OUTPUT: the report on stderr, before the exec'd program's output.
run_ktime xk-se KTIME_WARMUP=0 KTIME_FORMAT=csv "$E2E_BIN/app_fork" --exec 7 execvp true
check "exec, report on stderr: written before the exec" grep -q '^fk_parent,fk_parent,kernel,' "$tmp/xk-se.err"
# The exec fails: the program goes on, errno and all; its later launches are counted as
# shutdown (untimed) and the report file is written again with them at exit.
run_plain xb-fail "$E2E_BIN/app_fork" --exec 7 execv "$tmp/no-such-program"
run_ktime xk-fail KTIME_OUTPUT="$tmp/x-fail.json" KTIME_WARMUP=0 \
    "$E2E_BIN/app_fork" --exec 7 execv "$tmp/no-such-program"
check "exec fails: same exit status and stdout (errno 2 as without ktime)" \
    sh -c "grep -q '^exec failed: errno 2 ' '$tmp/xb-fail.out' && cmp -s '$tmp/xb-fail.out' '$tmp/xk-fail.out' && [ \$(cat '$tmp/xb-fail.rc') = \$(cat '$tmp/xk-fail.rc') ]"
check "exec fails: nothing on stderr" empty "$tmp/xk-fail.err"
check "exec fails: 14 launches, the 7 before timed, the 7 after counted as shutdown" \
    sh -c "'$JCHECK' '$tmp/x-fail.json' 'kernels[mangled=fk_parent].calls' == 14 && '$JCHECK' '$tmp/x-fail.json' 'kernels[mangled=fk_parent].timed' == 7 && '$JCHECK' '$tmp/x-fail.json' totals.dropped_reasons.shutdown == 7"
check "exec fails: every launch in exactly one bucket" accounting "$tmp/x-fail.json"

finish
