#!/usr/bin/env bash
# memops.sh - memory operations timed apart from kernels, on a GPU (issue 13).
#
#   bash tests/gpu/memops.sh BUILD [OUT]      e.g.  bash tests/gpu/memops.sh build
#
# BUILD holds libktime (BUILD/src/.libs/libktime.so), BUILD/gpu/memops and BUILD/gpu/libkcount.so
# (tests/gpu/build.sh). Three runs, JSON reports in OUT (default ./gpu-out/memops):
#   cuda    memops 4 40 (the CUDA runtime: async copies from and to pinned memory, DtoD, sets,
#           synchronous copies from and to pageable memory, a 2D copy) under ktime and libkcount
#           (CUPTI's memcpy and memset records, KCOUNT_MEMOPS=1);
#   torch   PyTorch copies (tensor.cuda(), .cpu(), non_blocking from pinned memory, copy_ on the
#           device, zero_ of a fresh tensor) under ktime and libkcount;
#   cupti   memops under KTIME_TIMER=cupti (no libkcount: CUPTI has one activity client here).
# Checks: per kind, ktime's calls and bytes equal CUPTI's records (and, for cuda, the program's
# own count); the touch kernel's mean under ktime is within 10 us of CUPTI's (no copy inside its
# interval); with the CUPTI timer the memory operations are still timed. Prints one "ok"/"not
# ok" line per check, then a table of ktime's and CUPTI's mean time per kind. Exit 0 when all
# pass, 1 otherwise, 77 without a GPU.
set -u
BUILD=${1:-build}
OUT=${2:-gpu-out/memops}
nvidia-smi -L >/dev/null 2>&1 || { echo "no GPU: skipped"; exit 77; }
LIB=$(cd "$BUILD/src/.libs" 2>/dev/null && pwd)/libktime.so
APP=$BUILD/gpu/memops
KC=$(cd "$BUILD/gpu" 2>/dev/null && pwd)/libkcount.so
[ -f "$LIB" ] && [ -x "$APP" ] && [ -f "$KC" ] || { echo "missing $LIB, $APP or $KC" >&2; exit 1; }
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd) || exit 1

env KTIME_OUTPUT="$OUT/cuda.json" KCOUNT_OUTPUT="$OUT/cuda-kc.json" KCOUNT_MEMOPS=1 \
    LD_PRELOAD="$LIB:$KC" "$APP" 4 40 >"$OUT/cuda.out" 2>"$OUT/cuda.err"
echo $? >"$OUT/cuda.rc"
env KTIME_TIMER=cupti KTIME_OUTPUT="$OUT/cupti.json" LD_PRELOAD="$LIB" "$APP" 4 40 \
    >"$OUT/cupti.out" 2>"$OUT/cupti.err"
echo $? >"$OUT/cupti.rc"
cat >"$OUT/torch_copies.py" <<'PY'
import torch
x = torch.randn(1 << 20)
p = torch.randn(1 << 20).pin_memory()
for i in range(30):
    a = x.cuda()
    b = p.cuda(non_blocking=True)
    c = torch.empty_like(a)
    c.copy_(a)
    d = c.cpu()
    e = a.to("cpu", non_blocking=True)
    torch.cuda.synchronize()
print("done", float(d[0]) == float(x[0]), float(e[0]) == float(x[0]))
PY
env KTIME_OUTPUT="$OUT/torch.json" KCOUNT_OUTPUT="$OUT/torch-kc.json" KCOUNT_MEMOPS=1 \
    LD_PRELOAD="$LIB:$KC" python3 "$OUT/torch_copies.py" >"$OUT/torch.out" 2>"$OUT/torch.err"
echo $? >"$OUT/torch.rc"

python3 - "$OUT" <<'PY'
import json, os, sys
out = sys.argv[1]
n = fails = 0
def check(ok, what):
    global n, fails
    n += 1
    fails += not ok
    print("%s %d - %s" % ("ok" if ok else "not ok", n, what))
def load(name):
    try:
        return json.load(open(os.path.join(out, name)))
    except (OSError, ValueError) as e:
        check(False, "%s: readable (%s)" % (name, e))
        return None
rows = []
for run in ("cuda", "torch"):
    rc = open(os.path.join(out, run + ".rc")).read().strip()
    check(rc == "0", "%s: exit status 0 (%s)" % (run, rc))
    rep, kc = load(run + ".json"), load(run + "-kc.json")
    if not rep or not kc:
        continue
    mine = {m["kind"]: m for m in rep.get("memops") or []}
    theirs = kc.get("memops") or {}
    check(bool(theirs), "%s: CUPTI's memory records were counted" % run)
    for kind in ("HtoD", "DtoH", "DtoD", "HtoH", "peer", "memset"):
        m, c = mine.get(kind, {}), theirs.get(kind, {})
        mc, cc = m.get("calls", 0), c.get("count", 0)
        if not mc and not cc:
            continue
        check(mc == cc and m.get("bytes", 0) == c.get("bytes", 0),
              "%s %s: calls %d, bytes %d (CUPTI: %d records, %d bytes)"
              % (run, kind, mc, m.get("bytes", 0), cc, c.get("bytes", 0)))
        cupti_mean = c["sum_ns"] / cc / 1000.0 if cc else None
        rows.append((run, kind, mc, m.get("timed", 0), m.get("mean_us"), cupti_mean, m.get("ungated", 0),
                     m.get("gb_per_s")))
    if run == "cuda":
        said = {}
        for line in open(os.path.join(out, "cuda.out")):
            w = line.split()
            if len(w) == 3 and w[0] in ("HtoD", "DtoH", "DtoD", "memset"):
                said[w[0]] = (int(w[1]), int(w[2]))
        check(len(said) == 4 and all(mine.get(k, {}).get("calls") == v[0] and
                                     mine.get(k, {}).get("bytes") == v[1] for k, v in said.items()),
              "cuda: calls and bytes per kind are the program's own: %s" % said)
        k = [x for x in rep["kernels"] if "touch" in x["mangled"]]
        kk = [x for x in kc.get("kernels", []) if "touch" in x["mangled"]]
        if k and kk and kk[0].get("complete"):
            hw = kk[0]["sum_ns"] / kk[0]["complete"] / 1000.0
            check(k[0]["calls"] == kk[0]["count"] and abs(k[0]["mean_us"] - hw) < 10,
                  "cuda: touch's %d launches (CUPTI %d); its mean %.2f us against CUPTI's %.2f: "
                  "no copy in its interval" % (k[0]["calls"], kk[0]["count"], k[0]["mean_us"], hw))
        else:
            check(False, "cuda: the touch kernel in both reports")
rc = open(os.path.join(out, "cupti.rc")).read().strip()
check(rc == "0", "cupti: exit status 0 (%s)" % rc)
rep = load("cupti.json")
if rep:
    mine = {m["kind"]: m for m in rep.get("memops") or []}
    used = (rep.get("timer") or {}).get("used")
    check(used == "cupti" and all(mine.get(k, {}).get("timed", 0) > 0 for k in ("HtoD", "DtoH", "DtoD", "memset")),
          "cupti: kernels timed by %s, every kind's memory operations still timed (events)" % used)
print()
print("| run | kind | calls | timed | ktime mean us | CUPTI mean us | ungated | GB/s |")
print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
f = lambda v: "%.2f" % v if isinstance(v, (int, float)) else "-"
for r in rows:
    print("| %s | %s | %d | %d | %s | %s | %d | %s |" % (r[0], r[1], r[2], r[3], f(r[4]), f(r[5]), r[6], f(r[7])))
print()
print("%d checks, %d failed" % (n, fails))
sys.exit(1 if fails else 0)
PY
