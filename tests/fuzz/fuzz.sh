#!/bin/sh
# fuzz.sh - runs each fuzz target (tests/fuzz/README.md) over its corpus, every seed and
# every input that once failed, then for FUZZ_SECONDS (default 5) of new inputs; the targets
# run side by side. TAP: two tests per target. An input that fails is kept in
# FUZZ_ARTIFACTS (default tests/fuzz/artifacts in the build folder) and named in the output.
#
# Environment (make check sets the first two): FUZZ_ENGINE (libfuzzer or driver),
# FUZZ_CORPUS (the corpus folder of the source tree), FUZZ_BIN (the built targets, default
# tests/fuzz), FUZZ_SECONDS, FUZZ_SEED (default: from the clock; printed), FUZZ_TARGETS
# (default: all).
set -u
: "${FUZZ_BIN:=$PWD/tests/fuzz}"
: "${FUZZ_CORPUS:=$(cd "$(dirname "$0")" && pwd)/corpus}"
: "${FUZZ_SECONDS:=5}"
: "${FUZZ_SEED:=$(($(date +%s) % 1000000 + 1))}"
: "${FUZZ_ARTIFACTS:=$FUZZ_BIN/artifacts}"
: "${FUZZ_TARGETS:=config outpath names json nvversion read}"
: "${FUZZ_ENGINE:=?}"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ktime-fuzz.XXXXXX") || { echo "Bail out! mktemp failed"; exit 99; }
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
mkdir -p "$FUZZ_ARTIFACTS" || { echo "Bail out! cannot make $FUZZ_ARTIFACTS"; exit 99; }

# Every report is a failure: ASan and UBSan end the target at the first (the targets are
# built with -fno-sanitize-recover=undefined), LeakSanitizer checks at exit (libFuzzer: after
# each input that allocates). Nothing else of the caller's settings applies.
ASAN_OPTIONS=abort_on_error=1:detect_leaks=1:allocator_may_return_null=0
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export ASAN_OPTIONS UBSAN_OPTIONS
unset LD_PRELOAD

echo "# engine $FUZZ_ENGINE, $FUZZ_SECONDS s per target, seed $FUZZ_SEED"
for t in $FUZZ_TARGETS; do
    (
        bin=$FUZZ_BIN/fuzz_$t
        corpus=$FUZZ_CORPUS/$t
        mkdir -p "$tmp/new-$t"
        "$bin" -runs=0 -artifact_prefix="$FUZZ_ARTIFACTS/$t-" "$corpus" >"$tmp/$t.replay" 2>&1
        echo $? >"$tmp/$t.replay.rc"
        "$bin" -max_total_time="$FUZZ_SECONDS" -max_len=4096 -timeout=20 -rss_limit_mb=2048 \
            -seed="$FUZZ_SEED" -artifact_prefix="$FUZZ_ARTIFACTS/$t-" -print_final_stats=1 \
            "$tmp/new-$t" "$corpus" >"$tmp/$t.fuzz" 2>&1
        echo $? >"$tmp/$t.fuzz.rc"
    ) &
done
wait

T=0
report() { # DESC RCFILE LOG
    T=$((T + 1))
    if [ "$(cat "$2" 2>/dev/null)" = 0 ]; then
        echo "ok $T - $1"
    else
        echo "not ok $T - $1"
        echo "# exit status $(cat "$2" 2>/dev/null); the end of its output:"
        tail -n 40 "$3" | sed 's/^/# /'
    fi
}
for t in $FUZZ_TARGETS; do
    n=$(find "$FUZZ_CORPUS/$t" -type f 2>/dev/null | wc -l)
    report "fuzz_$t: its corpus ($n inputs) runs clean" "$tmp/$t.replay.rc" "$tmp/$t.replay"
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p; s/^driver: \([0-9]*\) generated.*/\1/p' "$tmp/$t.fuzz" | tail -n 1)
    report "fuzz_$t: $FUZZ_SECONDS s of new inputs (${runs:-?} runs), no failure" "$tmp/$t.fuzz.rc" "$tmp/$t.fuzz"
done
echo "1..$T"
