#!/usr/bin/env python3
"""ktime's timers on a real GPU (issues 11 and 14): the CUPTI timer's counts and means against
the independent counter (libkcount), the events-versus-hardware bias table (KTIME_TIMER=both),
torch.profiler and ncu beside the CUPTI timer, and two counting cases of issue 14.

usage: timers.py --lib LIB --gpu BUILD/gpu --out DIR [--budget-s 420] [--only PART,...]

Parts:
  cupti     each workload three times: libkcount alone, ktime alone with KTIME_TIMER=cupti, and
            with KTIME_TIMER=both. ktime and CUPTI cannot both own CUPTI's activity buffers in one
            process (ktime hands CUPTI over to any other client), so the counter runs apart; the
            workloads are deterministic. Checks per kernel: ktime's launches that ran
            (calls - captured - failed) plus its records of graph nodes (in_graph) equal CUPTI's
            records; for the spin kernels of app_* (durations fixed by %globaltimer), ktime's mean
            equals CUPTI's mean over the same records (the first KTIME_WARMUP left out) within
            0.1 %. both: every kernel's events mean, hardware mean and bias.
  exitrace  app_exitrace (threads launching while main calls exit) under libkcount + ktime,
            three times: ktime's launches that ran (launches seen - failed) against CUPTI's
            records; how many ktime counted as `shutdown`.
  profiler  workloads/profiler_handover.py bare and under KTIME_TIMER=cupti: the profiler sees
            its 100 kernels either way; ktime says it handed CUPTI over and counts 300 launches.
  ncu       ncu on app_static with KTIME_TIMER=cupti preloaded: ncu profiles; ktime times with
            events and says why (CUDA_INJECTION64_PATH).
Writes DIR/timers.md and DIR/timers-runs.tar.gz; prints the tables last. Exit 77 without a GPU.
"""
import argparse
import glob
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
WARMUP = 5
T0 = time.monotonic()


def elapsed():
    return time.monotonic() - T0


def run(cmd, env_extra, cwd, timeout=240):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("KTIME_", "KCOUNT_")) and k != "LD_PRELOAD"}
    env.update(env_extra)
    t = time.monotonic()
    try:
        p = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
        rc, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        rc, out, err = "timeout", (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or ""), "timeout"
    return rc, out, err, time.monotonic() - t


def need_gpu():
    """Exits 77 (skipped) where there is no GPU."""
    if not shutil.which("nvidia-smi") or \
            subprocess.run(["nvidia-smi", "-L"], capture_output=True).returncode != 0:
        print("no GPU")
        sys.exit(77)


def load_all(pattern):
    docs = []
    for p in sorted(glob.glob(pattern)):
        try:
            with open(p) as f:
                docs.append(json.load(f))
        except (OSError, ValueError):
            pass
    return docs


def ktime_kernels(docs):
    """mangled -> summed counts over processes (kernel rows only)."""
    ks = {}
    for d in docs:
        for k in d.get("kernels", []):
            if k.get("kind") == "graph":
                continue
            e = ks.setdefault(k["mangled"], {"calls": 0, "captured": 0, "failed": 0, "in_graph": 0,
                                            "timed": 0, "cupti_timed": 0, "sum_us": 0.0,
                                            "warmup": 0, "incomplete": 0, "dropped": 0, "hw": None,
                                            "unsampled": 0, "timed_by_nodes": 0})
            for f in ("calls", "captured", "failed", "in_graph", "timed", "cupti_timed",
                      "incomplete", "dropped", "unsampled", "timed_by_nodes"):
                e[f] += k.get(f, 0)
            e["warmup"] += k.get("warmup_skipped", 0)
            e["sum_us"] += k.get("sum_us", 0.0)
            if k.get("hw"):
                e["hw"] = k["hw"]
                e["mean_us"] = k.get("mean_us")
    for e in ks.values():
        e["mean"] = e["sum_us"] / e["timed"] if e["timed"] else None
    return ks


def kcount_kernels(docs):
    ks = {}
    for d in docs:
        for k in d.get("kernels", []):
            e = ks.setdefault(k["mangled"], {"count": 0, "durs": []})
            e["count"] += k.get("count", 0)
            e["durs"] += k.get("durations_ns", k.get("durations", [])) or []
    return ks


def short(n, w=60):
    return n if len(n) <= w else n[: w - 3] + "..."


APPS = [("static", ["app_static"]), ("driver", ["app_driver"]), ("ptds", ["app_ptds", "-t", "2"]),
        ("paths", ["app_paths"])]
PYW = [("torch_mlp", [os.path.join(HERE, "torch_mlp.py")]),
       ("cublas", [os.path.join(HERE, "workloads", "cublas.py")]),
       ("triton", [os.path.join(HERE, "workloads", "triton_add.py")]),
       ("torch_graphs", [os.path.join(HERE, "workloads", "torch_graphs.py")]),
       ("capture_warmup", [os.path.join(HERE, "workloads", "capture_warmup.py")])]


def part_cupti(a, tmp, rows, bias_rows, notes):
    for name, argv in APPS + PYW:
        if elapsed() > a.budget_s:
            notes.append("cupti: %s skipped (time budget)" % name)
            continue
        cmd = ([os.path.join(a.gpu, argv[0])] + argv[1:]) if name in dict(APPS) else [sys.executable] + argv
        d = os.path.join(tmp, "cupti-" + name)
        os.makedirs(d, exist_ok=True)
        kcj = os.path.join(d, "kc.%p.json")
        rc0, out0, err0, s0 = run(cmd, {"LD_PRELOAD": a.kcount, "KCOUNT_OUTPUT": kcj}, d)
        ktj = os.path.join(d, "kt.%p.json")
        rc1, out1, err1, s1 = run(cmd, {"LD_PRELOAD": a.lib, "KTIME_TIMER": "cupti", "KTIME_OUTPUT": ktj,
                                        "KTIME_WARMUP": str(WARMUP)}, d)
        kbj = os.path.join(d, "kb.%p.json")
        rc2, out2, err2, s2 = run(cmd, {"LD_PRELOAD": a.lib, "KTIME_TIMER": "both", "KTIME_OUTPUT": kbj,
                                        "KTIME_WARMUP": str(WARMUP)}, d)
        for tag, err in (("kcount", err0), ("cupti", err1), ("both", err2)):
            with open(os.path.join(d, tag + ".err"), "w") as f:
                f.write(err)
        kc = kcount_kernels(load_all(kcj.replace("%p", "*")))
        ktd, kbd = load_all(ktj.replace("%p", "*")), load_all(kbj.replace("%p", "*"))
        kt, kb = ktime_kernels(ktd), ktime_kernels(kbd)
        used = sorted({d.get("timer", {}).get("used", "?") for d in ktd})
        usedb = sorted({d.get("timer", {}).get("used", "?") for d in kbd})
        bad, means_ok, means_n = [], 0, 0
        for m in sorted(set(kc) | set(kt)):
            c = kc.get(m, {}).get("count", 0)
            k = kt.get(m)
            kv = (k["calls"] - k["captured"] - k["failed"] + k["in_graph"]) if k else 0
            if c != kv:
                bad.append("%s: CUPTI %d, ktime-cupti %d" % (short(m), c, kv))
            # Every record in one bucket: more records than launches (another kernel's, under
            # this name) would pass the count above and skew the mean.
            if k:
                buckets = sum(k[f] for f in ("warmup", "captured", "dropped", "failed", "timed",
                                             "incomplete", "unsampled", "timed_by_nodes"))
                if buckets != k["calls"] + k["in_graph"]:
                    bad.append("%s: ktime-cupti buckets %d != calls + in_graph %d" % (
                        short(m), buckets, k["calls"] + k["in_graph"]))
            # ptds: two threads' kernels overlap on the GPU, so durations differ between runs.
            if k and name in dict(APPS) and name != "ptds" and kc.get(m, {}).get("durs") and \
                    k["mean"] is not None:
                durs = [x for x in kc[m]["durs"][WARMUP:] if x is not None]
                if durs:
                    ref = statistics.fmean(durs) / 1000.0
                    means_n += 1
                    diff = k["mean"] - ref
                    if abs(diff) <= max(0.001 * ref, 0.02):
                        means_ok += 1
                    else:
                        bad.append("%s: mean ktime-cupti %.3f us, CUPTI %.3f us (%+.3f %%)" % (
                            short(m), k["mean"], ref, 100 * diff / ref))
        for m, k in sorted(kb.items()):
            if k.get("hw") and k["hw"].get("timed"):
                bias_rows.append((name, short(m, 50), k["timed"], k.get("mean_us"), k["hw"]["timed"],
                                  k["hw"]["mean_us"], k["hw"].get("bias_us")))
        # The floor's own records (ktime's empty kernel at exit) belong to the floor only.
        for tag, docs in (("cupti", ktd), ("both", kbd)):
            for doc in docs:
                for dv in doc.get("devices", []):
                    if dv.get("floor_events_us") and not dv.get("floor_hw_us"):
                        bad.append("%s: device %s: floor measured with events but no floor "
                                   "records" % (tag, dv.get("ordinal")))
        same = out0 == out1 == out2 and rc0 == rc1 == rc2
        tot_c = sum(v["count"] for v in kc.values())
        tot_k = sum(v["calls"] - v["captured"] - v["failed"] + v["in_graph"] for v in kt.values())
        rows.append(("cupti", name, tot_c, tot_k, len(bad), "%d/%d" % (means_ok, means_n) if means_n else "-",
                     "yes" if same else "NO", "timer %s / both %s; rc %s %s %s" % (
                         ",".join(used), ",".join(usedb), rc0, rc1, rc2)))
        notes += ["cupti %s: %s" % (name, b) for b in bad[:8]]
        if not same:
            notes.append("cupti %s: stdout/rc differ: kcount %r rc %s / cupti %r rc %s / both %r rc %s; "
                         "stderr %s" % (name, out0[-120:], rc0, out1[-120:], rc1, out2[-120:], rc2,
                                        err1.strip()[-300:]))


def part_exitrace(a, tmp, rows, notes):
    """The program makes exactly threads x N launch calls; main exits while the threads are still
    launching, and an exit handler of the program's that runs last waits for them. So part of the
    calls come while ktime writes its report, some fail once CUDA has shut down, and every one is
    made before the process ends. ktime's launches seen must equal the program's count, the
    footer must add up, and its launches that ran (seen - failed) must be at least CUPTI's:
    libkcount's exit handler runs before ktime's (it registers one at every buffer request), so
    it stops counting first and its count is a lower bound."""
    for i in range(3):
        d = os.path.join(tmp, "exitrace-%d" % i)
        os.makedirs(d, exist_ok=True)
        kcj, ktj = os.path.join(d, "kc.json"), os.path.join(d, "kt.json")
        rc, out, err, secs = run([os.path.join(a.gpu, "app_exitrace"), "-t", "4", "-n", "20000",
                                  "-m", "20"],
                                 {"LD_PRELOAD": a.kcount + ":" + a.lib, "KCOUNT_OUTPUT": kcj,
                                  "KTIME_OUTPUT": ktj, "KTIME_WARMUP": str(WARMUP)}, d, timeout=60)
        with open(os.path.join(d, "err.txt"), "w") as f:
            f.write(err)
        kc, ktd = kcount_kernels(load_all(kcj)), load_all(ktj)
        want = int(out.split()[2]) if out.startswith("expect exitrace_k ") else None
        if not ktd:
            rows.append(("exitrace", "#%d" % (i + 1), "-", "-", 1, "-", "-", "no report (rc %s)" % rc))
            notes.append("exitrace #%d: stderr %s" % (i + 1, err.strip()[-300:]))
            continue
        t = ktd[0]["totals"]
        c = sum(v["count"] for v in kc.values())
        shut = t.get("dropped_reasons", {}).get("shutdown", 0)
        parts = (t["timed"] + t["warmup_skipped"] + t["captured"] + t["dropped"] + t["failed_launches"]
                 + t["incomplete_at_exit"] + t.get("unsampled", 0))
        m = re.search(r"app_exitrace: (\d+) launch calls failed", err)
        app_failed = int(m.group(1)) if m else None
        # The calls that succeeded, by the program's own count, against ktime's launches that
        # ran. A call that failed may never have reached the driver (cudart refuses launches
        # once it has shut down), so ktime sees at most the program's calls.
        ran = t["launches_seen"] - t["failed_launches"]
        ok = want is not None and app_failed is not None and ran == want - app_failed and \
            t["launches_seen"] <= want and parts == t["launches_seen"] and ran >= c
        rows.append(("exitrace", "#%d" % (i + 1), c, ran, 0 if ok else 1, "-", "-",
                     "program: %s calls, %s failed; ktime: %d seen, %d failed, %d shutdown; footer "
                     "adds up: %s; rc %s" % (want, app_failed, t["launches_seen"], t["failed_launches"],
                                             shut, "yes" if parts == t["launches_seen"] else "NO", rc)))
        if not ok:
            notes.append("exitrace #%d: program %s calls (%s failed), ktime %d seen (%d failed, %d "
                         "shutdown), CUPTI (stops first) %d" % (
                             i + 1, want, app_failed, t["launches_seen"], t["failed_launches"], shut, c))


def part_profiler(a, tmp, rows, notes):
    d = os.path.join(tmp, "profiler")
    os.makedirs(d, exist_ok=True)
    cmd = [sys.executable, os.path.join(HERE, "workloads", "profiler_handover.py")]
    rc0, out0, err0, _ = run(cmd, {}, d)
    ktj = os.path.join(d, "kt.%p.json")
    rc1, out1, err1, _ = run(cmd, {"LD_PRELOAD": a.lib, "KTIME_TIMER": "cupti", "KTIME_OUTPUT": ktj,
                                   "KTIME_WARMUP": str(WARMUP)}, d)
    with open(os.path.join(d, "err.txt"), "w") as f:
        f.write(err1)
    docs = load_all(ktj.replace("%p", "*"))
    note = docs[0].get("timer", {}).get("note") if docs else None
    tanh = [k for k in ktime_kernels(docs).items() if "tanh" in k[0]]
    calls = tanh[0][1]["calls"] if tanh else 0
    prof_ok = "profiler tanh kernels: 100" in out1
    ok = rc0 == rc1 == 0 and out0 == out1 and prof_ok and calls == 300 and note and "took CUPTI over" in note
    rows.append(("profiler", "handover", "-", calls, 0 if ok else 1, "-", "yes" if out0 == out1 else "NO",
                 "profiler saw 100: %s; tanh cupti_timed %s, timed %s; note: %s" % (
                     "yes" if prof_ok else "NO", tanh[0][1]["cupti_timed"] if tanh else "-",
                     tanh[0][1]["timed"] if tanh else "-", (note or "none")[:90])))
    if not ok:
        notes.append("profiler: bare %r rc %s / ktime %r rc %s; stderr %s" % (
            out0[-150:], rc0, out1[-150:], rc1, err1.strip()[-400:]))


def part_ncu(a, tmp, rows, notes):
    """ncu must still profile with ktime's CUPTI timer asked for; and under an injected tool
    (CUDA_INJECTION64_PATH, here a do-nothing injection library) ktime times with events and
    says why."""
    d = os.path.join(tmp, "ncu")
    os.makedirs(d, exist_ok=True)
    app = [os.path.join(a.gpu, "app_static"), "-n", "20,10,4,2", "-l", "0"]
    ncu = shutil.which("ncu") or next(iter(glob.glob("/usr/local/cuda/bin/ncu")), None)
    if ncu:
        ktj = os.path.join(d, "kt.%p.json")
        rc, out, err, secs = run([ncu, "--launch-count", "3", "--section", "SpeedOfLight"] + app,
                                 {"LD_PRELOAD": a.lib, "KTIME_TIMER": "cupti", "KTIME_OUTPUT": ktj,
                                  "KTIME_WARMUP": "1", "KTIME_LOG": "info"}, d, timeout=300)
        with open(os.path.join(d, "out.txt"), "w") as f:
            f.write(out + "\n---- stderr\n" + err)
        docs = load_all(ktj.replace("%p", "*"))
        profiled = out.count("Speed Of Light") >= 3 or out.count("SpeedOfLight") >= 3
        note = next((x.get("timer", {}).get("note") for x in docs if x.get("timer", {}).get("note")), None)
        rows.append(("ncu", "app_static", "-", "-", 0 if rc == 0 and profiled else 1, "-", "-",
                     "rc %s, ncu profiled 3 kernels: %s; ktime reports in the target: %d%s" % (
                         rc, "yes" if profiled else "NO", len(docs),
                         ", note: " + note[:70] if note else "")))
        if rc != 0 or not profiled:
            notes.append("ncu: rc %s; tail: %s" % (rc, (out + err).strip()[-500:]))
    inj = os.path.join(a.gpu, "libinject_dummy.so")
    ktj = os.path.join(d, "inj.json")
    rc0, out0, _, _ = run(app, {}, d)
    rc, out, err, secs = run(app, {"LD_PRELOAD": a.lib, "KTIME_TIMER": "cupti", "KTIME_OUTPUT": ktj,
                                   "CUDA_INJECTION64_PATH": inj}, d, timeout=120)
    docs = load_all(ktj)
    t = docs[0].get("timer", {}) if docs else {}
    ok = rc == rc0 == 0 and out == out0 and t.get("used") == "events" and \
        "CUDA_INJECTION64_PATH" in (t.get("note") or "") and docs[0]["totals"]["timed"] > 0
    rows.append(("injected", "app_static", "-", docs[0]["totals"]["launches_seen"] if docs else "-",
                 0 if ok else 1, "-", "yes" if out == out0 else "NO",
                 "timer used %s; note: %s" % (t.get("used"), (t.get("note") or "none")[:80])))
    if not ok:
        notes.append("injected: rc %s/%s; stderr %s" % (rc0, rc, err.strip()[-300:]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--gpu", required=True)
    ap.add_argument("--out", default=os.environ.get("OUT", "timers-out"))
    ap.add_argument("--budget-s", type=float, default=420)
    ap.add_argument("--only")
    a = ap.parse_args()
    need_gpu()
    a.lib = os.path.abspath(a.lib)
    a.gpu = os.path.abspath(a.gpu)
    a.kcount = os.path.join(a.gpu, "libkcount.so")
    only = set(a.only.split(",")) if a.only else {"cupti", "exitrace", "profiler", "ncu"}
    os.makedirs(a.out, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="ktime-timers.")
    rows, bias_rows, notes = [], [], []
    for part, fn in (("exitrace", part_exitrace), ("profiler", part_profiler), ("ncu", part_ncu)):
        if part in only:
            print("[%.0fs] %s" % (elapsed(), part), flush=True)
            fn(a, tmp, rows, notes)
    if "cupti" in only:
        print("[%.0fs] cupti" % elapsed(), flush=True)
        part_cupti(a, tmp, rows, bias_rows, notes)
    smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip()
    lines = ["# ktime timers on the GPU (tests/gpu/timers.py)", "",
             "%s; %s UTC; ktime-build %s; %.0f s" % (smi, time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
                                                     build_id(a.lib), elapsed()), "",
             "| part | workload | CUPTI | ktime | problems | means within 0.1 % | output identical | notes |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    lines += ["| " + " | ".join(str(x) for x in r) + " |" for r in rows]
    lines += ["", "## KTIME_TIMER=both: events against the hardware", "",
              "| workload | kernel | events timed | events mean us | hw timed | hw mean us | bias us |",
              "| --- | --- | --- | --- | --- | --- | --- |"]
    lines += ["| %s | `%s` | %s | %s | %s | %s | %s |" % (w, k, n, fmt(em), hn, fmt(hm), fmt(b, "+.3f"))
              for (w, k, n, em, hn, hm, b) in bias_rows]
    lines += ["", "## Problems", ""] + (["- " + n for n in notes] or ["none"])
    text = "\n".join(lines) + "\n"
    with open(os.path.join(a.out, "timers.md"), "w") as f:
        f.write(text)
    with tarfile.open(os.path.join(a.out, "timers-runs.tar.gz"), "w:gz") as t:
        t.add(tmp, arcname="timers-runs")
    print(text)


def fmt(x, spec=".3f"):
    return "-" if x is None else format(x, spec)


def build_id(lib):
    try:
        with open(lib, "rb") as f:
            data = f.read()
        i = data.find(b"ktime-build ")
        return data[i + 12: data.find(b"\0", i)].decode(errors="replace") if i >= 0 else "?"
    except OSError:
        return "?"


if __name__ == "__main__":
    main()
