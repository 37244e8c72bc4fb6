#!/usr/bin/env bash
# sigterm.sh - a CUDA program that raises SIGTERM after its kernels ends by that signal under
# ktime, as it does without, and ktime's report is written first.
#
#   bash tests/gpu/sigterm.sh BUILD [OUT]      e.g.  bash tests/gpu/sigterm.sh build
#
# BUILD holds libktime (BUILD/src/.libs/libktime.so) and BUILD/gpu/app_sigterm
# (tests/gpu/build.sh). Runs app_sigterm (200 launches each of two kernels, then raise(SIGTERM))
# 3 times bare, then RUNS (20) times under ktime after a synchronize, and ASYNC_RUNS (10) times
# under ktime with the kernels still running when the signal comes (-a), KTIME_WARMUP=5, a JSON
# report per run in OUT (default ./gpu-out/sigterm). Checks, every run: exit status 143 (as
# bare), stdout as bare (the line after raise never printed), a valid report whose kernels have
# the program's counts (calls 200; timed 195 after a synchronize; timed + incomplete 195 with
# -a), and no line of ktime's on stderr besides "report written". One "ok"/"not ok" line per
# check, then a table of every run. Exit 0 when all pass, 1 otherwise, 77 without a GPU.
set -u
BUILD=${1:-build}
OUT=${2:-gpu-out/sigterm}
RUNS=${RUNS:-20}
ASYNC_RUNS=${ASYNC_RUNS:-10}
nvidia-smi -L >/dev/null 2>&1 || { echo "no GPU: skipped"; exit 77; }
LIB=$(cd "$BUILD/src/.libs" 2>/dev/null && pwd)/libktime.so
APP=$BUILD/gpu/app_sigterm
if [ ! -f "$LIB" ] || [ ! -x "$APP" ]; then echo "missing $LIB or $APP" >&2; exit 1; fi
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd) || exit 1
rm -f "$OUT"/*.json "$OUT"/*.out "$OUT"/*.err "$OUT"/*.rc "$OUT"/*.ms

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# one NAME ENV...: runs app_sigterm ARGS (from $ARGS) with ENV; NAME.{out,err,rc,ms} in OUT.
one() {
    local name=$1 t0
    shift
    t0=$(now_ms)
    # shellcheck disable=SC2086  # ARGS is a list of words
    timeout -k 5 60 env "$@" "$APP" $ARGS >"$OUT/$name.out" 2>"$OUT/$name.err"
    echo $? >"$OUT/$name.rc"
    echo $(($(now_ms) - t0)) >"$OUT/$name.ms"
}

ARGS=""
for i in 1 2 3; do
    one "bare-$i"
done
for i in $(seq 1 "$RUNS"); do
    one "sync-$i" LD_PRELOAD="$LIB" KTIME_WARMUP=5 KTIME_OUTPUT="$OUT/sync-$i.json"
done
ARGS="-a"
for i in $(seq 1 "$ASYNC_RUNS"); do
    one "async-$i" LD_PRELOAD="$LIB" KTIME_WARMUP=5 KTIME_OUTPUT="$OUT/async-$i.json"
done

python3 - "$OUT" "$RUNS" "$ASYNC_RUNS" <<'PY'
import json, os, sys
out, runs, aruns = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
n = fails = 0
def check(ok, what):
    global n, fails
    n += 1
    fails += not ok
    print("%s %d - %s" % ("ok" if ok else "not ok", n, what))
def read(name, ext):
    try:
        return open(os.path.join(out, name + "." + ext)).read()
    except OSError:
        return ""
bare = read("bare-1", "out")
expect = {}
for l in bare.splitlines():
    w = l.split()
    if len(w) == 3 and w[0] == "expect":
        expect[w[1]] = int(w[2])
check(len(expect) == 2 and "after raise" not in bare, "bare: the program's expect lines, nothing after raise")
check(all(read("bare-%d" % i, "rc").strip() == "143" for i in (1, 2, 3)), "bare: exit status 143, 3 of 3")
rows = []
for mode, count in (("sync", runs), ("async", aruns)):
    st_ok = out_ok = rep_ok = err_ok = 0
    for i in range(1, count + 1):
        name = "%s-%d" % (mode, i)
        rc, stdout, err = read(name, "rc").strip(), read(name, "out"), read(name, "err")
        lines = [l for l in err.splitlines() if l.startswith("ktime:") and "report written to" not in l]
        rep, why = None, ""
        try:
            rep = json.load(open(os.path.join(out, name + ".json")))
        except (OSError, ValueError) as e:
            why = "no report (%s)" % e.__class__.__name__
        calls = timed = incomplete = "-"
        good = rep is not None
        if rep:
            ks = {k: [r for r in rep.get("kernels", []) if k in r.get("mangled", "")] for k in expect}
            if all(len(v) == 1 for v in ks.values()):
                calls = ",".join(str(v[0]["calls"]) for v in ks.values())
                timed = ",".join(str(v[0]["timed"]) for v in ks.values())
                incomplete = ",".join(str(v[0]["incomplete"]) for v in ks.values())
                for k, v in ks.items():
                    r, want = v[0], expect[k]
                    done = r["timed"] if mode == "sync" else r["timed"] + r["incomplete"]
                    if r["calls"] != want or done != want - 5 or (mode == "sync" and r["incomplete"]):
                        good, why = False, "counts of %s: calls %d, timed %d, incomplete %d" % (
                            k, r["calls"], r["timed"], r["incomplete"])
            else:
                good, why = False, "kernel rows: %s" % {k: len(v) for k, v in ks.items()}
        st_ok += rc == "143"
        out_ok += stdout == bare
        rep_ok += good
        err_ok += not lines
        rows.append((name, rc, read(name, "ms").strip(), "yes" if rep else "no", calls, timed,
                     incomplete, len(lines), "; ".join(x for x in (why, lines[0] if lines else "") if x)))
    check(st_ok == count, "%s: exit status 143, %d of %d" % (mode, st_ok, count))
    check(out_ok == count, "%s: stdout as bare, nothing after raise, %d of %d" % (mode, out_ok, count))
    check(rep_ok == count, "%s: a report with the program's counts, %d of %d" % (mode, rep_ok, count))
    check(err_ok == count, "%s: no line of ktime's on stderr (but 'report written'), %d of %d" % (mode, err_ok, count))
print()
print("| run | status | ms | report | calls | timed | incomplete | ktime lines | note |")
print("| --- | ---: | ---: | --- | --- | --- | --- | ---: | --- |")
for r in rows:
    print("| %s | %s | %s | %s | %s | %s | %s | %d | %s |" % r)
print()
print("%d checks, %d failed" % (n, fails))
sys.exit(1 if fails else 0)
PY
