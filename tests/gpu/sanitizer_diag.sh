#!/usr/bin/env bash
# compute-sanitizer next to ktime, four ways, to tell where an attach failure comes from:
#   bare              compute-sanitizer APP
#   preload-outside   LD_PRELOAD=libktime compute-sanitizer APP   (the front end preloaded too)
#   preload-inside    compute-sanitizer env LD_PRELOAD=libktime APP (only the program)
#   disabled-outside  as preload-outside with KTIME_DISABLE=1
# usage: bash tests/gpu/sanitizer_diag.sh LIBKTIME APP [ARGS...]; prints one line per way.
set -u
lib=$1
shift
out=${OUT:-.}
for way in bare preload-outside preload-inside disabled-outside; do
    case $way in
    bare) cmd=(compute-sanitizer --tool memcheck "$@") ;;
    preload-outside) cmd=(env LD_PRELOAD="$lib" KTIME_OUTPUT="$out/san-$way.json" compute-sanitizer --tool memcheck "$@") ;;
    preload-inside) cmd=(compute-sanitizer --tool memcheck env LD_PRELOAD="$lib" KTIME_OUTPUT="$out/san-$way.json" "$@") ;;
    disabled-outside) cmd=(env LD_PRELOAD="$lib" KTIME_DISABLE=1 compute-sanitizer --tool memcheck "$@") ;;
    esac
    timeout 120 "${cmd[@]}" >"$out/san-$way.log" 2>&1
    rc=$?
    summ=$(grep -E "ERROR SUMMARY|No attachable|Error|error" "$out/san-$way.log" | head -n 3 | tr '\n' ' ')
    rep=-
    [ -f "$out/san-$way.json" ] && rep=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['totals']['launches_seen'])" "$out/san-$way.json" 2>&1)
    echo "sanitizer $way: rc $rc; ktime launches $rep; $summ"
done
