#!/usr/bin/env python3
"""Libraries and frameworks under ktime, each against an independent count (issue: every
launch path). Runs on the GPU machine from the repo root:

    python3 tests/gpu/libs.py --lib build/src/.libs/libktime.so --gpu build/gpu --out $OUT

For each workload in tests/gpu/workloads/: a bare run, and a run with
LD_PRELOAD=libkcount.so:libktime.so (CUPTI activity records, gathered in the same process by
the test helper libkcount; ktime itself is no CUPTI subscriber). Checks: same stdout; for each
kernel, ktime's calls == CUPTI's records. Kernels that ran inside CUDA graphs are seen by
CUPTI one by one but by ktime as the graph's launch, so for a workload with graphs the check is
the total: CUPTI records == sum over kernels of (calls - captured - failed) + sum over graph
rows of calls x kernel nodes, with the default KTIME_WARMUP=5: a captured launch among a
kernel's first five counts as captured, not warmup (capture_warmup captures kernels that never
ran before). torch.profiler and compute-sanitizer run with ktime alone (each brings
its own CUPTI or instrumentation): same stdout, their own success, and a ktime report.
Prints a markdown table last and writes it to OUT/libs.md. Exit 77 without a GPU.
"""
import argparse
import datetime
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
WORK = os.path.join(HERE, "workloads")
PY = ["cublas", "cudnn", "triton_add", "torch_graphs", "capture_warmup", "nccl_allreduce",
      "nccl_2gpu"]
GRAPH_WORKLOADS = {"torch_graphs", "capture_warmup"}


def run(cmd, env_extra, timeout=240):
    env = dict(os.environ)
    for k in ("LD_PRELOAD", "KTIME_OUTPUT", "KCOUNT_OUTPUT"):
        env.pop(k, None)
    env.update(env_extra)
    env["PYTHONPATH"] = WORK
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout, cwd=WORK)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        dec = lambda b: b.decode("utf-8", "replace") if isinstance(b, bytes) else (b or "")
        return "timeout", dec(e.stdout), dec(e.stderr)


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def load_all(pattern):
    """Merges the reports of every process (files named with %p): per-kernel counts summed,
    graph rows kept one by one, device ordinals united. None when no process wrote one."""
    docs = [d for d in (load(p) for p in sorted(glob.glob(pattern))) if d is not None]
    if not docs:
        return None
    merged, graphs, totals = {}, [], {}
    for d in docs:
        for k in d.get("kernels", []):
            if k.get("kind") == "graph":
                graphs.append(k)
                continue
            m = merged.setdefault(k["mangled"], {"mangled": k["mangled"], "devices": set(),
                                                 "per_device_count": {}})
            for f in ("calls", "captured", "failed", "count"):
                if f in k:
                    m[f] = m.get(f, 0) + k[f]
            m["devices"].update(k.get("devices", []))
            m["devices"].update(int(x) for x in (k.get("per_device") or {}) if isinstance(k.get("per_device"), dict))
        for key, v in (d.get("totals") or {}).items():
            if isinstance(v, int):
                totals[key] = totals.get(key, 0) + v
    return {"kernels": list(merged.values()) + graphs, "totals": totals, "processes": len(docs)}


def nodes_of(label):
    m = re.search(r"\((\d+) kernel nodes", label)
    return int(m.group(1)) if m else 0


def compare(kt, kc):
    """Returns (cupti_total, ktime_total, mismatches list)."""
    cupti = {k["mangled"]: k["count"] for k in kc["kernels"]}
    graphs = [k for k in kt["kernels"] if k.get("kind") == "graph"]
    kernels = {k["mangled"]: k for k in kt["kernels"] if k.get("kind") != "graph"}
    cupti_total = sum(cupti.values())
    if graphs:
        kt_total = sum(k["calls"] - k["captured"] - k["failed"] for k in kernels.values()) + \
            sum(g["calls"] * nodes_of(g["name"]) for g in graphs)
        bad = [] if kt_total == cupti_total else ["total: CUPTI %d, ktime %d" % (cupti_total, kt_total)]
        return cupti_total, kt_total, bad
    kt_total = sum(k["calls"] for k in kernels.values())
    bad = []
    for name in sorted(set(cupti) | set(kernels)):
        c = cupti.get(name, 0)
        k = kernels[name]["calls"] if name in kernels else 0
        if c != k:
            bad.append("%s: CUPTI %d, ktime %d" % (name[:70], c, k))
    return cupti_total, kt_total, bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--gpu", required=True, help="tests/gpu/build.sh output (libkcount.so, app_static)")
    ap.add_argument("--out", default=os.environ.get("OUT", "libs-out"))
    ap.add_argument("--sanitizer-app", help="program for the compute-sanitizer run (default: app_static)")
    ap.add_argument("--only", help="comma-separated workloads of %s (and/or 'profiler', 'sanitizer') "
                    "to run instead of all" % ",".join(PY))
    ap.add_argument("--repeat", type=int, default=1, help="run each workload this many times (rows w#i)")
    a = ap.parse_args()
    only = set(a.only.split(",")) if a.only else None
    if only and not only <= set(PY) | {"profiler", "sanitizer"}:
        ap.error("--only: unknown workloads %s" % ",".join(sorted(only - set(PY) - {"profiler", "sanitizer"})))
    try:
        has_gpu = subprocess.run(["nvidia-smi", "-L"], capture_output=True).returncode == 0
    except OSError:
        has_gpu = False
    if not has_gpu:
        print("no GPU")
        sys.exit(77)
    lib = os.path.abspath(a.lib)
    kcount = os.path.abspath(os.path.join(a.gpu, "libkcount.so"))
    os.makedirs(a.out, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="ktime-libs.")
    smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip()
    rows, notes = [], []

    runs = [(w, i) for i in range(max(1, a.repeat)) for w in PY if only is None or w in only]
    for wname, i in runs:
        w = wname if a.repeat <= 1 else "%s#%d" % (wname, i + 1)
        cmd = [sys.executable, os.path.join(WORK, wname + ".py")]
        rc0, out0, err0 = run(cmd, {})
        # One report per process (%p): a workload may spawn processes that inherit LD_PRELOAD.
        ktj = os.path.join(tmp, w.replace("#", "-") + ".%p.ktime.json")
        kcj = os.path.join(tmp, w.replace("#", "-") + ".%p.kcount.json")
        # Graph workloads too run with the default warmup: a launch captured among a kernel's
        # first KTIME_WARMUP counts as captured, not warmup (issue 14), and capture_warmup
        # captures kernels that never ran before. The total check needs that split.
        warm = "5"
        rc1, out1, err1 = run(cmd, {"LD_PRELOAD": kcount + ":" + lib, "KTIME_OUTPUT": ktj,
                                    "KCOUNT_OUTPUT": kcj, "KTIME_WARMUP": warm})
        kt, kc = load_all(ktj.replace("%p", "*")), load_all(kcj.replace("%p", "*"))
        same = rc0 == rc1 and out0 == out1
        if rc0 != 0:
            notes.append("%s: bare run failed (rc %s): %s" % (w, rc0, err0.strip()[-300:]))
        if kt is None or kc is None:
            rows.append((w, "-", "-", "-", "yes" if same else "NO", "no report (rc %s)" % rc1))
            notes.append("%s: ktime %s, kcount %s; stderr: %s" % (w, "ok" if kt else "missing",
                         "ok" if kc else "missing", err1.strip()[-400:]))
            continue
        ct, kt_total, bad = compare(kt, kc)
        kdev = sorted(set().union(*[k["devices"] for k in kt["kernels"] if k.get("kind") != "graph"] or [set()]))
        cdev = sorted(set().union(*[k["devices"] for k in kc["kernels"]] or [set()]))
        rows.append((w, ct, kt_total, len(bad), "yes" if same else "NO",
                     "dropped %d, incomplete %d; processes %d/%d; devices ktime %s, CUPTI %s" % (
                         kt["totals"].get("dropped", 0), kt["totals"].get("incomplete_at_exit", 0),
                         kt["processes"], kc["processes"], kdev, cdev)))
        if kdev != cdev:
            notes.append("%s: devices differ: ktime %s, CUPTI %s" % (w, kdev, cdev))
        notes += ["%s: %s" % (w, b) for b in bad[:10]]
        if not same:
            notes.append("%s: stdout differs: bare %r / ktime %r (rc %s/%s)" % (w, out0[-200:], out1[-200:], rc0, rc1))

    # torch.profiler in the same process as ktime.
    if only is None or "profiler" in only:
        profiler_row(lib, tmp, rows, notes)
    if only is None or "sanitizer" in only:
        sanitizer_row(a, lib, tmp, rows, notes)
    write_table(a, smi, rows, notes)


def profiler_row(lib, tmp, rows, notes):
    cmd = [sys.executable, os.path.join(WORK, "profiler_coexist.py")]
    rc0, out0, _ = run(cmd, {})
    ktj = os.path.join(tmp, "profiler.ktime.json")
    rc1, out1, err1 = run(cmd, {"LD_PRELOAD": lib, "KTIME_OUTPUT": ktj})
    kt = load(ktj)
    ok = "profiler recorded CUDA kernels: yes" in out1
    rows.append(("torch.profiler + ktime", "-", kt["totals"]["launches_seen"] if kt else "-", "-",
                 "yes" if (rc0 == rc1 and out0 == out1) else "NO",
                 "profiler saw kernels: %s" % ("yes" if ok else "NO")))
    if not ok or kt is None:
        notes.append("profiler: %s / %s" % (out1.strip()[-300:], err1.strip()[-300:]))



def sanitizer_row(a, lib, tmp, rows, notes):
    """compute-sanitizer (memcheck) on a static-cudart program with ktime preloaded."""
    app = os.path.abspath(a.sanitizer_app or os.path.join(a.gpu, "app_static"))
    args = [] if a.sanitizer_app else ["-n", "20,10,4,2"]
    rc0, out0, _ = run([app] + args, {})
    ktj = os.path.join(tmp, "sanitizer.ktime.json")
    rc1, out1, err1 = run(["compute-sanitizer", "--tool", "memcheck", app] + args,
                          {"LD_PRELOAD": lib, "KTIME_OUTPUT": ktj}, timeout=150)
    kt = load(ktj)
    clean = "ERROR SUMMARY: 0 errors" in (out1 + err1)
    app_out = "\n".join(l for l in out1.splitlines() if not l.startswith("========"))
    rows.append(("compute-sanitizer + ktime", "-", kt["totals"]["launches_seen"] if kt else "-", "-",
                 "yes" if app_out.strip() == out0.strip() else "NO",
                 "memcheck %s, rc %s" % ("0 errors" if clean else "NOT clean", rc1)))
    if not clean or kt is None:
        notes.append("sanitizer: %s / %s" % (out1.strip()[-400:], err1.strip()[-400:]))


def write_table(a, smi, rows, notes):
    head = "| workload | launches (CUPTI) | launches (ktime) | mismatched kernels | output identical | notes |\n|---|---|---|---|---|---|\n"
    table = head + "".join("| %s | %s | %s | %s | %s | %s |\n" % r for r in rows)
    md = "# ktime: libraries and frameworks against CUPTI\n\n- date: %s\n- GPU: %s\n\n%s\n" % (
        datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), smi, table)
    if notes:
        md += "\nNotes:\n\n" + "".join("- %s\n" % n for n in notes)
    with open(os.path.join(a.out, "libs.md"), "w") as f:
        f.write(md)
    print("\n".join("note: " + n for n in notes))
    print(table)


if __name__ == "__main__":
    main()
