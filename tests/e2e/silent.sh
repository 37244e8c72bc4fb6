#!/bin/sh
# silent.sh - never silent (issue 15): a process that launches nothing says so at exit, and
# writes an empty, valid report where KTIME_OUTPUT names one file for all and nothing is
# there yet, never over another report (tree.sh: a file per process gets none); "report written to PATH"; a relative
# KTIME_OUTPUT lands where the program started; a misspelt KTIME_* name is warned of. TAP.
. "$(dirname "$0")/lib.sh"
need_ktime

A=$E2E_BIN/app_cudart
NOLAUNCH="k_idle=1000:0"

# one_line ERRFILE REGEX: stderr is exactly one line, matching REGEX.
one_line() {
    [ "$(wc -l <"$1")" = 1 ] && grep -q "$2" "$1" && return 0
    echo "want one line matching '$2'; stderr:"
    cat "$1"
    return 1
}

# --- no launches: echo, a program without CUDA, a CUDA program that launches nothing ---
for prog in echo nocuda idle; do
    case $prog in
        echo) cmd="/bin/echo hi" name=echo ;;
        nocuda) cmd="$E2E_BIN/app_nocuda" name=app_nocuda ;;
        idle) cmd="$A $NOLAUNCH" name=app_cudart ;;
    esac
    for fmt in json txt csv; do
        f=$tmp/$prog.$fmt
        run_ktime "$prog-$fmt" KTIME_LOG=debug KTIME_OUTPUT="$f" $cmd
        check "$prog, KTIME_OUTPUT=*.$fmt: exit status 0" rc_is "$prog-$fmt" 0
        case $fmt in
            json)
                check "$prog: an empty, valid JSON report" jc "$f" totals.launches_seen == 0
                check "$prog: no kernels in it" jc "$f" 'kernels|len' == 0
                check "$prog: its note says why" jc "$f" note == "no CUDA launches seen in this process"
                check "$prog: python's json.tool reads it" sh -c "! command -v python3 >/dev/null || python3 -m json.tool '$f' >/dev/null" ;;
            txt)
                check "$prog: an empty text report" sh -c "grep -q '^launches 0 seen' '$f' && grep -q '^note     no CUDA launches seen in this process' '$f'" ;;
            csv)
                check "$prog: a CSV report of its header row only" sh -c "[ \$(wc -l <'$f') = 1 ] && head -c 14 '$f' | grep -q '^name,mangled,'" ;;
        esac
        # echo closes its stderr at exit (coreutils' close_stdout), before ktime's handler.
        if [ $prog != echo ]; then
            check "$prog, KTIME_LOG=debug: the line says an empty report was written" \
                grep -q "^ktime: no CUDA launches seen in $name (pid [0-9]*); empty report written to $f\$" "$tmp/$prog-$fmt.err"
        fi
    done
    run_ktime "$prog-q" KTIME_LOG=quiet KTIME_OUTPUT="$tmp/$prog-q.json" $cmd
    check "$prog, KTIME_LOG=quiet: nothing on stderr, the empty report all the same" \
        sh -c "[ ! -s '$tmp/$prog-q.err' ] && [ -s '$tmp/$prog-q.json' ]"
done
run_ktime nocuda-w KTIME_OUTPUT="$tmp/w.json" "$E2E_BIN/app_nocuda"
check "no CUDA, default level: one line" one_line "$tmp/nocuda-w.err" "^ktime: no CUDA launches seen in app_nocuda (pid [0-9]*); empty report written to $tmp/w.json\$"
run_ktime idle-w "$A" $NOLAUNCH
check "CUDA, no launch, no KTIME_OUTPUT: one line, no report" one_line "$tmp/idle-w.err" "^ktime: no CUDA launches seen in app_cudart (pid [0-9]*); no report written\$"
run_ktime nocuda-s "$E2E_BIN/app_nocuda"
check "no CUDA, no KTIME_OUTPUT: nothing on stderr at the default level" empty "$tmp/nocuda-s.err"
run_ktime nocuda-d KTIME_LOG=debug "$E2E_BIN/app_nocuda"
check "no CUDA, no KTIME_OUTPUT, KTIME_LOG=debug: the line" grep -q "^ktime: no CUDA launches seen in app_nocuda (pid [0-9]*); no report written\$" "$tmp/nocuda-d.err"

# --- another process's report is never replaced by an empty one ---
run_ktime real KTIME_OUTPUT="$tmp/real.json" "$A" k=1000:20
cp "$tmp/real.json" "$tmp/real.keep"
check "a report: 'report written to PATH', one line" one_line "$tmp/real.written" "^ktime: report written to $tmp/real.json\$"
check "a report: nothing else on stderr" empty "$tmp/real.err"
run_ktime over KTIME_OUTPUT="$tmp/real.json" "$E2E_BIN/app_nocuda"
check "an empty report never replaces another process's report" cmp "$tmp/real.json" "$tmp/real.keep"
check "... and says so only at KTIME_LOG=info (it loaded no CUDA)" empty "$tmp/over.err"
run_ktime over2 KTIME_OUTPUT="$tmp/real.json" "$A" $NOLAUNCH
check "a CUDA program that launched nothing leaves it too" cmp "$tmp/real.json" "$tmp/real.keep"
check "... and says so" one_line "$tmp/over2.err" "; $tmp/real.json holds another report, left as it is\$"
printf 'my notes\n' >"$tmp/notes.txt"
run_ktime notes KTIME_OUTPUT="$tmp/notes.txt" "$E2E_BIN/app_nocuda"
check "any other file is left as it is" grep -qx 'my notes' "$tmp/notes.txt"
run_ktime e1 KTIME_OUTPUT="$tmp/e.json" "$E2E_BIN/app_nocuda"
p1=$(jv "$tmp/e.json" pid)
run_ktime e2 KTIME_LOG=info KTIME_OUTPUT="$tmp/e.json" "$E2E_BIN/app_nocuda"
check "an empty report is made only where nothing is: the next one leaves it (a real report replaces it)" jc "$tmp/e.json" pid == "$p1"
check "... and says so at KTIME_LOG=info" one_line "$tmp/e2.err" "; $tmp/e.json holds an empty report already, left as it is\$"

# --- a script: the shell and its children all have the preload ---
# The CUDA child's report survives the children and the shell that exit after it, in either
# order; only the CUDA child speaks at the default level.
for order in before after; do
    if [ $order = before ]; then
        script="$E2E_BIN/app_nocuda >/dev/null; '$A' k=1000:12 >/dev/null; $E2E_BIN/app_nocuda >/dev/null; true"
    else
        script="'$A' k=1000:12 >/dev/null; $E2E_BIN/app_nocuda >/dev/null; $E2E_BIN/app_nocuda >/dev/null; true"
    fi
    run_ktime "sh-$order" KTIME_OUTPUT="$tmp/sh-$order.json" KTIME_WARMPU=3 sh -c "$script"
    check "script, no-CUDA children $order the CUDA one: its report stays" jc "$tmp/sh-$order.json" totals.launches_seen == 12
    check "script ($order): 'report written' once" one_line "$tmp/sh-$order.written" "^ktime: report written to $tmp/sh-$order.json\$"
    # The first child to make the file says so; the misspelling is told once, by the shell.
    check "script ($order): one warning for KTIME_WARMPU, naming KTIME_WARMUP" \
        sh -c "[ \$(grep -c 'KTIME_WARMPU' '$tmp/sh-$order.err') = 1 ] && grep -q '^ktime: warning: KTIME_WARMPU is not a ktime variable and is ignored; did you mean KTIME_WARMUP?\$' '$tmp/sh-$order.err'"
done

# --- KTIME_* names ---
run_ktime typo KTIME_WARMPU=0 KTIME_OUTPUT="$tmp/typo.json" "$A" k=1000:10
check "KTIME_WARMPU=0: one warning, the closest name" one_line "$tmp/typo.err" "^ktime: warning: KTIME_WARMPU is not a ktime variable and is ignored; did you mean KTIME_WARMUP?\$"
check "KTIME_WARMPU=0: ignored (the default warmup)" jc "$tmp/typo.json" 'kernels[mangled=k].warmup_skipped' == 5
run_ktime far KTIME_ZZZZZZZZZZ=1 KTIME_OUTPUT="$tmp/far.json" "$A" k=1000:10
check "a name close to none: warned of without a guess" one_line "$tmp/far.err" "^ktime: warning: KTIME_ZZZZZZZZZZ is not a ktime variable and is ignored (ktime --help lists them)\$"
run_ktime typo-q KTIME_LOG=quiet KTIME_WARMPU=0 KTIME_OUTPUT="$tmp/typoq.json" "$A" k=1000:10
check "KTIME_LOG=quiet: no warning" empty "$tmp/typo-q.err"

# --- a relative KTIME_OUTPUT: the directory the program started in, not the one at exit ---
mkdir "$tmp/start" "$tmp/elsewhere"
(cd "$tmp/start" && run_ktime cd KTIME_OUTPUT=rel.json "$A" --chdir "$tmp/elsewhere" k=1000:10)
check "chdir before exit: the report is in the start directory" jc "$tmp/start/rel.json" 'kernels[mangled=k].calls' == 10
check "chdir before exit: none where the program went" absent "$tmp/elsewhere/rel.json"
check "chdir before exit: the line names the absolute path" one_line "$tmp/cd.written" "^ktime: report written to $tmp/start/rel.json\$"
(cd "$tmp/start" && run_ktime cdp KTIME_OUTPUT='rel-%p.json' "$A" --chdir "$tmp/elsewhere" k=1000:10)
check "chdir before exit, with %p: in the start directory" sh -c "ls '$tmp/start'/rel-*.json >/dev/null 2>&1 && ! ls '$tmp/elsewhere'/rel-*.json >/dev/null 2>&1"
(cd "$tmp/start" && run_ktime cdi KTIME_OUTPUT=idle.json "$A" --chdir "$tmp/elsewhere" $NOLAUNCH)
check "chdir, no launches: the empty report in the start directory" sh -c "[ -s '$tmp/start/idle.json' ] && [ ! -e '$tmp/elsewhere/idle.json' ]"
(cd "$tmp/start" && run_ktime cdt KTIME_OUTPUT=t.json KTIME_TRACE=t.trace.json KTIME_DUMP_SAMPLES=t.samples \
    KTIME_ALSO_OUTPUT=t.txt "$A" --chdir "$tmp/elsewhere" k=1000:10)
check "chdir: the trace, the samples and the second report in the start directory too" \
    sh -c "[ -s '$tmp/start/t.trace.json' ] && [ -s '$tmp/start/t.samples' ] && [ -s '$tmp/start/t.txt' ] && [ ! -e '$tmp/elsewhere/t.trace.json' ] && [ ! -e '$tmp/elsewhere/t.samples' ] && [ ! -e '$tmp/elsewhere/t.txt' ]"
(cd "$tmp/start" && run_ktime cdr RANK=1 WORLD_SIZE=2 "$A" --chdir "$tmp/elsewhere" k=1000:10)
check "chdir, a rank's default name: in the start directory" sh -c "ls '$tmp/start'/ktime-*-1.txt >/dev/null 2>&1 && ! ls '$tmp/elsewhere'/ktime-* >/dev/null 2>&1"
finish
