#!/usr/bin/env bash
# compute-sanitizer next to ktime, four ways, to tell where an attach failure comes from:
#   bare              compute-sanitizer APP
#   preload-outside   LD_PRELOAD=libktime compute-sanitizer APP   (the front end preloaded too)
#   preload-inside    compute-sanitizer sh -c 'LD_PRELOAD=libktime:$LD_PRELOAD exec APP'
#                     (only the program, ahead of the sanitizer's own preloads)
#   disabled-outside  as preload-outside with KTIME_DISABLE=1
# usage: bash tests/gpu/sanitizer_diag.sh LIBKTIME APP [ARGS...]; prints one line per way.
set -u
lib=$1
shift
out=${OUT:-.}
CS="--launch-timeout 30 --tool memcheck"
for way in bare preload-outside preload-inside disabled-outside; do
    case $way in
    bare) cmd=(compute-sanitizer $CS "$@") ;;
    preload-outside) cmd=(env LD_PRELOAD="$lib" KTIME_OUTPUT="$out/san-$way.json" compute-sanitizer $CS "$@") ;;
    preload-inside) cmd=(compute-sanitizer $CS env KTIME_OUTPUT="$out/san-$way.json" sh -c \
        "LD_PRELOAD=$lib:\$LD_PRELOAD exec \"\$@\"" sh "$@") ;;
    disabled-outside) cmd=(env LD_PRELOAD="$lib" KTIME_DISABLE=1 compute-sanitizer $CS "$@") ;;
    esac
    timeout 90 "${cmd[@]}" >"$out/san-$way.log" 2>&1
    rc=$?
    summ=$(grep -E "ERROR SUMMARY|No attachable|Error|error" "$out/san-$way.log" | head -n 3 | tr '\n' ' ')
    rep=-
    [ -f "$out/san-$way.json" ] && rep=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['totals']['launches_seen'])" "$out/san-$way.json" 2>&1)
    echo "sanitizer $way: rc $rc; ktime launches $rep; $summ"
done
