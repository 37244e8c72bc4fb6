#!/bin/sh
# settings.sh - the settings declared once (src/core/settings.def): the documentation's
# settings blocks are what tools/ktime-settings writes (tools/settings.sh --check, and that
# check failing on a block that differs or is missing); `ktime --config` and
# KTIME_DUMP_CONFIG=1 print every setting in force with where it came from; every report key
# the table names is in the JSON report, holding the setting's value. TAP.
. "$(dirname "$0")/lib.sh"
need_ktime

: "${BUILD_DIR:=$E2E_BIN/../..}"
: "${SRC_DIR:=$(dirname "$0")/../..}"
K=$BUILD_DIR/tools/ktime
S=$BUILD_DIR/tools/ktime-settings
[ -x "$K" ] || e2e_fail_setup "launcher not built: $K (set BUILD_DIR)"
[ -x "$S" ] || e2e_fail_setup "tools/ktime-settings not built: $S (set BUILD_DIR)"
A=$E2E_BIN/app_cudart
ARGS="k_small=125000:10 k_big=1000000:7"

# As launcher.sh: programs run through the launcher get a sanitizer's runtime first.
KENV=
if [ -n "${E2E_PRELOAD_FIRST:-}" ]; then
    KENV="LD_PRELOAD=$E2E_PRELOAD_FIRST"
    [ "${E2E_SANITIZER:-}" = asan ] && KENV="$KENV ASAN_OPTIONS=$ASAN_OPTIONS:detect_leaks=0"
fi
run_k() { # NAME [VAR=VALUE...] ARGS...
    _n=$1
    shift
    # shellcheck disable=SC2086
    $TIMEOUT env LD_LIBRARY_PATH="$LDP" $KENV "$@" >"$tmp/$_n.out" 2>"$tmp/$_n.err"
    echo $? >"$tmp/$_n.rc"
}
# has FILE LINE: FILE holds LINE, whole.
has() {
    grep -qxF -- "$2" "$1" && return 0
    echo "no line '$2' in $1:"
    head -n 40 "$1"
    return 1
}
# line NAME=VALUE ORIGIN: a line of the settings in force, as config_describe pads it.
line() { printf '%-31s (%s)' "$1" "$2"; }
"$S" --names >"$tmp/names" || e2e_fail_setup "ktime-settings --names failed"
N=$(wc -l <"$tmp/names")

# --- the documentation's blocks ---------------------------------------------------------------
check "the settings blocks of the launcher, docs/usage.md, docs/settings.md and the man pages are settings.def's (else: tools/settings.sh --update)" \
    sh "$SRC_DIR/tools/settings.sh" --check "$BUILD_DIR" "$SRC_DIR"

# The check itself, on a copy of the documented files: it passes on the copy, fails on a cell
# changed by hand and on a block without its end, and --update puts the generated text back.
mkdir -p "$tmp/src/tools" "$tmp/src/docs" "$tmp/src/man"
for f in tools/ktime.in docs/usage.md docs/settings.md man/libktime.7 man/ktime.1; do
    cp "$SRC_DIR/$f" "$tmp/src/$f" || e2e_fail_setup "cannot copy $f"
done
chk() { sh "$SRC_DIR/tools/settings.sh" "$@" "$BUILD_DIR" "$tmp/src" >"$tmp/chk.out" 2>&1; }
check "the check passes on an unchanged copy" chk --check
sed 's/^| `KTIME_WARMUP` | `5` |/| `KTIME_WARMUP` | `7` |/' "$SRC_DIR/docs/usage.md" >"$tmp/src/docs/usage.md"
check "a row of docs/usage.md changed by hand: the check fails and names docs/usage.md" \
    sh -c "! sh '$SRC_DIR/tools/settings.sh' --check '$BUILD_DIR' '$tmp/src' >'$tmp/chk.out' 2>&1 &&
           grep -q \"docs/usage.md's settings block differs\" '$tmp/chk.out' && grep -q '^+| .KTIME_WARMUP. | .5. |' '$tmp/chk.out'"
chk --update
check "--update writes the row back: the file is the original again" cmp "$SRC_DIR/docs/usage.md" "$tmp/src/docs/usage.md"
grep -v 'settings: end' "$SRC_DIR/man/libktime.7" >"$tmp/src/man/libktime.7"
check "a block without its end line: the check fails and says so" \
    sh -c "! sh '$SRC_DIR/tools/settings.sh' --check '$BUILD_DIR' '$tmp/src' >'$tmp/chk.out' 2>&1 &&
           grep -q 'man/libktime.7: no settings: end line' '$tmp/chk.out'"
sed '/settings: end/a\
.TP\
.B KTIME_EXTRA\
not in settings.def.' "$SRC_DIR/man/libktime.7" >"$tmp/src/man/libktime.7"
check "a line after the block is the file's own: the check passes" chk --check
sed '/settings: begin/a\
.B KTIME_EXTRA' "$SRC_DIR/man/ktime.1" >"$tmp/src/man/ktime.1"
check "a name added inside a block: the check fails" sh -c "! sh '$SRC_DIR/tools/settings.sh' --check '$BUILD_DIR' '$tmp/src' >/dev/null 2>&1"
check "ktime-settings --names: every setting, KTIME_WARMUP first" \
    sh -c "[ $N -ge 27 ] && [ \"\$(head -n 1 '$tmp/names')\" = KTIME_WARMUP ] && grep -qx KTIME_DUMP_CONFIG '$tmp/names'"
check "--help lists every setting, as NAME=" sh -c "'$K' --help >'$tmp/help' && while read -r v; do grep -q \"^  \$v=\" '$tmp/help' || { echo \"\$v missing\"; exit 1; }; done <'$tmp/names'"

# --- ktime --config -------------------------------------------------------------------------
run_k cfg KTIME_SAMPLE=4 KTIME_TIMER=hardware KTIME_NVTX=0 "$K" -w 3 -o r.json --range profiler-api --config
check "--config: status 0" sh -c "[ \$(cat '$tmp/cfg.rc') = 0 ]"
check "--config: one line per setting on stdout, in settings.def's order" \
    sh -c "[ \$(wc -l <'$tmp/cfg.out') = $N ] && sed 's/=.*//' '$tmp/cfg.out' | cmp -s - '$tmp/names'"
check "--config: an option's setting says so" has "$tmp/cfg.out" "$(line 'KTIME_WARMUP=3' "launcher option")"
check "--config: -o, a relative file made absolute" has "$tmp/cfg.out" "$(line "KTIME_OUTPUT=$PWD/r.json" "launcher option")"
check "--config: the format from KTIME_OUTPUT's suffix" has "$tmp/cfg.out" "$(line 'KTIME_FORMAT=json' "KTIME_OUTPUT's suffix")"
check "--config: the environment's setting" has "$tmp/cfg.out" "$(line 'KTIME_SAMPLE=4' "environment")"
check "--config: a refused value, the default kept" has "$tmp/cfg.out" "$(line 'KTIME_TIMER=events' "default; the environment's value was refused")"
check "--config: the refused value's warning on stderr, once" one_warning "$tmp/cfg.err" KTIME_TIMER events
check "--config: a value with its parameter (--range)" has "$tmp/cfg.out" "$(line 'KTIME_CAPTURE=profiler-api' "launcher option")"
check "--config: KTIME_NVTX=0 set in the environment stays" has "$tmp/cfg.out" "$(line 'KTIME_NVTX=0' "environment")"
check "--config: a path unset, its default said" has "$tmp/cfg.out" "$(line 'KTIME_TRACE=' "default: none")"
check "--config: a default" has "$tmp/cfg.out" "$(line 'KTIME_GATE=auto' "default")"
run_k cfg2 "$K" --conf
check "--config (as --conf): the launcher's own default" has "$tmp/cfg2.out" "$(line 'KTIME_NVTX=1' "launcher default")"
run_k cfg3 KTIME_CAPTURE='nvtx:train step' "$K" --config
check "--config: KTIME_CAPTURE=nvtx:NAME with its name" has "$tmp/cfg3.out" "$(line 'KTIME_CAPTURE=nvtx:train step' environment)"
run_k cfgp "$K" --config "$A"
check "--config with a program: a usage error (status 2), nothing run" \
    sh -c "[ \$(cat '$tmp/cfgp.rc') = 2 ] && [ ! -s '$tmp/cfgp.out' ] && grep -q '^ktime: --config runs no program' '$tmp/cfgp.err'"

# --- KTIME_DUMP_CONFIG=1 in the library ------------------------------------------------------
# shellcheck disable=SC2086
run_plain base "$A" $ARGS
# shellcheck disable=SC2086
run_ktime dump KTIME_DUMP_CONFIG=1 KTIME_OUTPUT="$tmp/d.json" KTIME_WARMUP=2 KTIME_GATE=bogus "$A" $ARGS
check "KTIME_DUMP_CONFIG=1: the program's stdout and status unchanged" same_run base dump
check "KTIME_DUMP_CONFIG=1: one 'ktime: ' line per setting on stderr, and the warning" \
    sh -c "[ \$(grep -c '^ktime: KTIME_[A-Z0-9_]*=' '$tmp/dump.err') = $N ] && [ \$(wc -l <'$tmp/dump.err') = $((N + 1)) ]"
check "KTIME_DUMP_CONFIG=1: the environment's value" has "$tmp/dump.err" "ktime: $(line 'KTIME_WARMUP=2' "environment")"
check "KTIME_DUMP_CONFIG=1: a refused value" has "$tmp/dump.err" "ktime: $(line 'KTIME_GATE=auto' "default; the environment's value was refused")"
check "KTIME_DUMP_CONFIG=1: the format from the suffix" has "$tmp/dump.err" "ktime: $(line 'KTIME_FORMAT=json' "KTIME_OUTPUT's suffix")"
check "KTIME_DUMP_CONFIG=1: itself" has "$tmp/dump.err" "ktime: $(line 'KTIME_DUMP_CONFIG=1' "environment")"
check "KTIME_DUMP_CONFIG=1: the library's NVTX default, not the launcher's" has "$tmp/dump.err" "ktime: $(line 'KTIME_NVTX=0' "default")"
check "KTIME_DUMP_CONFIG=1: the report written, with the settings in force" \
    sh -c "'$JCHECK' '$tmp/d.json' warmup == 2 && '$JCHECK' '$tmp/d.json' launch_gate_requested == auto"
# shellcheck disable=SC2086
run_ktime dq KTIME_DUMP_CONFIG=1 KTIME_LOG=quiet "$A" $ARGS
check "KTIME_DUMP_CONFIG=1 KTIME_LOG=quiet: printed all the same (it was asked for)" \
    has "$tmp/dq.err" "ktime: $(line 'KTIME_LOG=quiet' "environment")"
# A shell script: the first process ktime reaches prints the lines, its children (which
# inherit the variable) do not at the default level.
# shellcheck disable=SC2086
run_ktime dsh KTIME_DUMP_CONFIG=1 KTIME_OUTPUT="$tmp/sh.json" sh -c "'$A' $ARGS; '$A' $ARGS"
check "KTIME_DUMP_CONFIG=1 in a shell script: the lines once for the tree" \
    sh -c "[ \$(grep -c '^ktime: KTIME_WARMUP=' '$tmp/dsh.err') = 1 ]"
# shellcheck disable=SC2086
run_k dk KTIME_DUMP_CONFIG=1 KTIME_OUTPUT="$tmp/k.json" "$K" -w 4 -q "$A" $ARGS
check "KTIME_DUMP_CONFIG=1 under the launcher: an option's setting" has "$tmp/dk.err" "ktime: $(line KTIME_WARMUP=4 'launcher option')"
check "KTIME_DUMP_CONFIG=1 under the launcher: -q's" has "$tmp/dk.err" "ktime: $(line KTIME_LOG=quiet 'launcher option')"
check "KTIME_DUMP_CONFIG=1 under the launcher: its default" has "$tmp/dk.err" "ktime: $(line KTIME_NVTX=1 'launcher default')"
check "KTIME_DUMP_CONFIG=1 under the launcher: the environment's" has "$tmp/dk.err" "ktime: $(line "KTIME_OUTPUT=$tmp/k.json" environment)"

# --- the report keys ----------------------------------------------------------------------------
"$S" --report-keys >"$tmp/keys"
check "ktime-settings --report-keys: the settings the report shows" sh -c "[ \$(wc -l <'$tmp/keys') -ge 10 ]"
# shellcheck disable=SC2086
run_ktime rk KTIME_OUTPUT="$tmp/rk.json" KTIME_WARMUP=3 KTIME_GROUP=shape KTIME_GATE=1 KTIME_SAMPLE=2 KTIME_INTERVAL=3600 \
    KTIME_CAPTURE=profiler-api KTIME_LAUNCH_COLUMNS=1 KTIME_NVML_INTERVAL_MS=250 KTIME_NVML_LIB="$FAKE_DIR/nvml/libnvidia-ml.so.1" \
    "$A" $ARGS
# want NAME VALUE: the report key settings.def gives NAME holds VALUE.
want() {
    _k=$(sed -n "s/^$1 //p" "$tmp/keys")
    [ -n "$_k" ] || { echo "$1 has no report key"; return 1; }
    "$JCHECK" "$tmp/rk.json" "$_k" == "$2"
}
check "every report key's member is in the JSON report" sh -c \
    "while read -r n k; do '$JCHECK' '$tmp/rk.json' \"\${k%%.*}\" >/dev/null || { echo \"\$n: no \${k%%.*}\"; exit 1; }; done <'$tmp/keys'"
check "report key of KTIME_WARMUP holds its value" want KTIME_WARMUP 3
check "report key of KTIME_GROUP holds its value" want KTIME_GROUP shape
check "report key of KTIME_GATE holds its value" want KTIME_GATE on
check "report key of KTIME_TIMER holds its value" want KTIME_TIMER events
check "report key of KTIME_SAMPLE holds its value" want KTIME_SAMPLE 2
check "report key of KTIME_CAPTURE holds its value" want KTIME_CAPTURE profiler-api
check "report key of KTIME_NVML_INTERVAL_MS holds its value" want KTIME_NVML_INTERVAL_MS 250
check "report key of KTIME_LAUNCH_COLUMNS holds its value" want KTIME_LAUNCH_COLUMNS true
check "report key of KTIME_NVML_LIB holds its value" want KTIME_NVML_LIB "$FAKE_DIR/nvml/libnvidia-ml.so.1"
check "report key of KTIME_INTERVAL holds its value" want KTIME_INTERVAL 3600
finish
