#!/usr/bin/env python3
"""Compares ktime's reports with the independent CUPTI counter (libkcount) for tests/gpu/run.sh.

usage: compare.py WORKDIR [--summary FILE] [--header FILE]

WORKDIR/runs.tsv has one row per program run (written by run.sh):
  workload kind rc seconds prog stdout stderr ktime_json kcount_json ref_stdout
kind is bare, both (kcount + ktime), both_rev (ktime first in LD_PRELOAD), disable
(KTIME_DISABLE=1) or kcount (the counter alone). Paths are relative to WORKDIR; "-" means none.

Checks, per workload:
- output identical: each run's stdout equals the bare run's (ref_stdout);
- launch counts: ktime `calls` against CUPTI's record count, joined by mangled name, and both
  against the counts the program itself prints ("expect KEY N": KEY is a substring of the
  mangled name);
- mean bias: ktime `mean_us` against the mean CUPTI duration of the same launches. ktime skips
  the first `warmup_skipped` launches of each kernel; CUPTI sees all, so its durations (kept in
  launch order, by correlation id) are compared from index `warmup_skipped` on. Passes when
  0 <= ktime_mean - cupti_mean <= max(8 us, 2 % of cupti_mean): an event pair carries a fixed
  +3 to +7 us on top of the kernel (gpu-facts.md) and can never be shorter than it.
Prints problems and the summary table (last) to stdout; writes the table and per-kernel details
as markdown to --summary. Exit status 0 unless the inputs cannot be read at all.
"""
import json
import os
import re
import statistics
import sys

BIAS_FLOOR_US = 8.0
BIAS_FRACTION = 0.02
MEASURE_KINDS = ("both", "both_rev", "kcount")


def load_json(path):
    if not path or path == "-":
        return None, "not requested"
    if not os.path.exists(path):
        return None, "missing"
    try:
        with open(path) as f:
            return json.load(f), None
    except (OSError, ValueError) as e:
        return None, "unreadable (%s)" % e


def read_text(path):
    if not path or path == "-" or not os.path.exists(path):
        return None
    with open(path, "rb") as f:
        return f.read().decode("utf-8", "replace")


def short(name, n=70):
    return name if len(name) <= n else name[: n - 3] + "..."


def fmt(x, nd=2):
    if x is None:
        return "-"
    if isinstance(x, float):
        return "%.*f" % (nd, x)
    return str(x)


def read_runs(work):
    path = os.path.join(work, "runs.tsv")
    rows = []
    with open(path) as f:
        header = f.readline().rstrip("\n").split("\t")
        for line in f:
            if not line.strip():
                continue
            vals = line.rstrip("\n").split("\t")
            vals += ["-"] * (len(header) - len(vals))
            row = dict(zip(header, vals))
            for key in ("stdout", "stderr", "ktime_json", "kcount_json", "ref_stdout"):
                v = row.get(key, "-")
                row[key] = "-" if v in ("", "-") else os.path.join(work, v)
            rows.append(row)
    return rows


def ktime_index(doc, notes, graphs_expected=False):
    """mangled name -> merged kernel entry of a ktime JSON report (graph rows left out: CUPTI
    has one record per kernel node, ktime one sample per graph launch)."""
    out = {}
    for k in doc.get("kernels", []) or []:
        name = k.get("mangled") or k.get("name") or "<unnamed>"
        if k.get("kind", "kernel") != "kernel":
            if not (graphs_expected and k.get("kind") == "graph"):
                notes.append("ktime %s row %s: %s calls (not compared)"
                             % (k.get("kind"), short(name, 50), k.get("calls")))
            continue
        if name in out:
            notes.append("ktime lists %s twice" % short(name, 50))
            prev = out[name]
            for key in ("calls", "warmup_skipped", "captured", "dropped", "failed", "incomplete",
                        "timed"):
                prev[key] = (prev.get(key) or 0) + (k.get(key) or 0)
            prev["mean_us"] = None  # cannot merge means without the raw sums: no bias check
        else:
            out[name] = dict(k)
    return out


def kcount_index(doc):
    return {k.get("mangled", "<unnamed>"): k for k in doc.get("kernels", []) or []}


def check_ktime_doc(doc, prog, notes):
    if doc.get("schema_version") not in (1, 2):
        notes.append("ktime schema_version is %r, not 1 or 2" % doc.get("schema_version"))
    cmd = doc.get("command") or []
    if prog and prog != "-" and cmd and os.path.basename(str(cmd[0])) != prog:
        notes.append("ktime report is from %r, not %r (another process wrote it?)"
                     % (os.path.basename(str(cmd[0])), prog))
    if doc.get("note"):
        notes.append("ktime note: %s" % doc["note"])
    warmup = doc.get("warmup")
    total_calls = 0
    for k in doc.get("kernels", []) or []:
        name = short(k.get("mangled") or k.get("name") or "?", 50)
        calls = k.get("calls") or 0
        total_calls += calls
        fields = ["warmup_skipped", "captured", "dropped", "failed", "timed"]
        if "incomplete" in k:
            fields.append("incomplete")
        parts = sum((k.get(x) or 0) for x in fields)
        if parts > calls or ("incomplete" in k and parts != calls):
            notes.append("ktime %s: %s = %d, calls %d" % (name, "+".join(fields), parts, calls))
        if k.get("incomplete"):
            notes.append("ktime %s: %d incomplete" % (name, k["incomplete"]))
        if k.get("kind", "kernel") != "kernel":
            continue
        # Each loaded copy of a kernel (a module loaded again) warms up on its own, in one row,
        # and so does its first launch in each further context: more than the warmup, at most
        # every call.
        # Captured launches are no warmup (they never ran): the warmup is the first of the
        # launches that went to a stream not being captured.
        ws = k.get("warmup_skipped")
        ran = calls - (k.get("captured") or 0)
        if isinstance(warmup, int) and not (
                ws == min(ran, warmup) or
                (isinstance(ws, int) and warmup > 0 and warmup < ws <= ran)):
            notes.append("ktime %s: warmup_skipped %r, expected min(calls %d - captured, warmup %d) "
                         "or, for kernels loaded again or run in several contexts, more"
                         % (name, ws, calls, warmup))
    totals = doc.get("totals") or {}
    seen = totals.get("launches_seen")
    if isinstance(seen, int) and seen != total_calls:
        notes.append("ktime totals.launches_seen %d != sum of calls %d" % (seen, total_calls))
    for key in ("dropped", "failed_launches", "incomplete_at_exit", "captured"):
        v = totals.get(key)
        if v:
            extra = ""
            if key == "dropped" and totals.get("dropped_reasons"):
                extra = " %s" % json.dumps(totals["dropped_reasons"], sort_keys=True)
            notes.append("ktime totals.%s = %s%s" % (key, v, extra))


def check_kcount_doc(doc, notes):
    for key in ("dropped", "incomplete", "lost_no_memory"):
        if doc.get(key):
            notes.append("CUPTI %s = %s" % (key, doc[key]))
    if doc.get("final_flush_result") not in (0, None):
        notes.append("CUPTI final flush returned %s" % doc.get("final_flush_result"))
    if doc.get("report_via") not in ("atexit", None):
        notes.append("kcount report written from the %s" % doc.get("report_via"))


def expected_counts(text):
    out = []
    for line in (text or "").splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == "expect":
            try:
                out.append((parts[1], int(parts[2])))
            except ValueError:
                pass
    return out


def program_lines(text, tag, nargs):
    """Lines `TAG ARG...` with nargs arguments, the first a key, the rest integers."""
    out = []
    for line in (text or "").splitlines():
        parts = line.split()
        if len(parts) == nargs + 1 and parts[0] == tag:
            try:
                out.append((parts[1],) + tuple(int(x) for x in parts[2:]))
            except ValueError:
                pass
    return out


def graph_rows(doc):
    """(calls, kernel nodes) of every graph row of a ktime report."""
    out = []
    for k in (doc or {}).get("kernels", []) or []:
        if k.get("kind") == "graph":
            m = re.search(r"\((\d+) kernel nodes", k.get("name") or "")
            out.append((int(k.get("calls") or 0), int(m.group(1)) if m else -1))
    return out


def count_by_key(index, key, field):
    """Sum of field over the kernels whose name contains key; a name equal to key (an
    extern "C" kernel) is matched alone, so drv_spin_launch does not take drv_spin_launch_ex."""
    hits = [v for name, v in index.items() if name == key] or \
        [v for name, v in index.items() if key in name]
    if not hits:
        return 0, 0
    return sum(int(v.get(field) or 0) for v in hits), len(hits)


def exact_hash(text):
    for line in (text or "").splitlines():
        if "exact-weights-sha256" in line:
            return line.split()[-1]
    return None


def kernel_rows(kt, kc, warmup):
    """Per-kernel comparison rows; kt or kc may be None (that side absent)."""
    names = set(kc or {}) | set(kt or {})
    rows = []
    for name in names:
        a = (kt or {}).get(name)
        c = (kc or {}).get(name)
        r = {"name": name,
             "cupti_n": int(c.get("count", 0)) if c else 0,
             "ktime_calls": int(a.get("calls") or 0) if a else 0,
             "warmup_skipped": a.get("warmup_skipped") if a else None,
             "timed": a.get("timed") if a else None,
             "ktime_mean": a.get("mean_us") if a else None,
             "cupti_mean": None, "cupti_median": None, "diff": None, "limit": None,
             "verdict": "-"}
        if c:
            durs = c.get("durations_ns") or []
            skip = r["warmup_skipped"]
            if not isinstance(skip, int):
                skip = min(warmup if isinstance(warmup, int) else 0, len(durs))
            post = [d for d in durs[skip:] if isinstance(d, (int, float))]
            if post:
                r["cupti_mean"] = sum(post) / len(post) / 1000.0
                r["cupti_median"] = statistics.median(post) / 1000.0
                r["cupti_post_n"] = len(post)
        if kt is not None:
            if not a:
                r["verdict"] = "n/a (not in ktime)"
            elif not c:
                r["verdict"] = "n/a (not in CUPTI)"
            elif not r["timed"] or r["ktime_mean"] is None:
                r["verdict"] = "n/a (not timed)"
            elif r["cupti_mean"] is None:
                r["verdict"] = "n/a (no CUPTI durations)"
            else:
                d = float(r["ktime_mean"]) - r["cupti_mean"]
                lim = max(BIAS_FLOOR_US, BIAS_FRACTION * r["cupti_mean"])
                r["diff"], r["limit"] = d, lim
                if d < 0:
                    r["verdict"] = "FAIL (ktime < CUPTI)"
                elif d > lim:
                    r["verdict"] = "FAIL (> limit)"
                else:
                    r["verdict"] = "pass"
        rows.append(r)
    rows.sort(key=lambda r: (-max(r["cupti_n"], r["ktime_calls"]), r["name"]))
    return rows


def analyse(wl, runs):
    """Returns (table row dict, markdown detail lines, problem lines) for one workload."""
    notes, details = [], []
    by_kind = {r["kind"]: r for r in runs}
    bare = by_kind.get("bare")

    # --- run status and identical output
    for r in runs:
        if r["rc"] == "skip":
            notes.append("%s run skipped (time budget)" % r["kind"])
        elif r["rc"] == "missing":
            notes.append("program not found: not run")
        elif r["rc"] != "0":
            why = {"124": " (timeout)", "137": " (timeout, killed)",
                   "77": " (the program cannot run here)"}.get(r["rc"], "")
            notes.append("%s run exit %s%s" % (r["kind"], r["rc"], why))
    ident = []
    for r in runs:
        if r["kind"] == "bare" or r["ref_stdout"] == "-":
            continue
        a, b = read_text(r["ref_stdout"]), read_text(r["stdout"])
        if a is None or b is None or r["rc"] != "0":
            ident.append("%s: n/a" % r["kind"])
        elif a == b:
            ident.append("%s: yes" % r["kind"])
        else:
            ident.append("%s: NO" % r["kind"])
    if any(x.endswith(": NO") for x in ident):
        output_identical = "NO (" + ", ".join(x for x in ident if x.endswith(": NO")) + ")"
    elif ident and all(x.endswith(": yes") for x in ident):
        output_identical = "yes"
    elif ident:
        output_identical = "partly (" + ", ".join(ident) + ")"
    else:
        output_identical = "n/a"

    ref_text = read_text(bare["stdout"]) if bare else None
    if ref_text is None:
        for r in runs:
            if r["ref_stdout"] != "-":
                ref_text = read_text(r["ref_stdout"])
                break
    h_ref = exact_hash(read_text(bare["stderr"])) if bare else None
    if h_ref:
        for r in runs:
            if r["kind"] != "bare":
                h = exact_hash(read_text(r["stderr"]))
                if h and h != h_ref:
                    notes.append("%s: exact weights differ from bare (rounded output may match)"
                                 % r["kind"])

    # --- the measured run
    m = next((by_kind[k] for k in MEASURE_KINDS if k in by_kind), None)
    row = {"workload": wl, "kernels": "-", "cupti": "-", "ktime": "-", "mismatch": "-",
           "identical": output_identical, "bias": "-", "notes": notes}
    if m is None:
        details += ["### %s" % wl, ""] + ["- note: %s" % n for n in notes] + [""]
        return row, details, ["%s: %s" % (wl, n) for n in notes]
    kt_doc, kt_err = load_json(m["ktime_json"])
    kc_doc, kc_err = load_json(m["kcount_json"])
    if m["ktime_json"] != "-" and kt_err:
        notes.append("ktime JSON %s" % kt_err)
    if kc_err:
        notes.append("CUPTI (kcount) JSON %s" % kc_err)
    graph_keys = [g[0] for g in program_lines(ref_text, "graph", 3)]
    kt = ktime_index(kt_doc, notes, bool(graph_keys)) if kt_doc else None
    kc = kcount_index(kc_doc) if kc_doc else None
    if kt_doc:
        check_ktime_doc(kt_doc, m.get("prog"), notes)
    if kc_doc:
        check_kcount_doc(kc_doc, notes)
    warmup = kt_doc.get("warmup") if kt_doc else None

    rows = kernel_rows(kt, kc, warmup)
    row["kernels"] = str(len(rows)) if (kt or kc) else "-"
    if kc is not None:
        row["cupti"] = str(sum(r["cupti_n"] for r in rows))
    if kt is not None:
        row["ktime"] = str(sum(r["ktime_calls"] for r in rows))
    # Kernels that ran as graph nodes: CUPTI records each node execution, ktime the graph's
    # launch (a row of its own) and the capture-time launch in the kernel's row.
    in_graph = lambda name: any(k in name for k in graph_keys)
    mism = [r for r in rows if kt is not None and kc is not None
            and r["cupti_n"] != r["ktime_calls"] and not in_graph(r["name"])]
    if kt is not None and kc is not None:
        row["mismatch"] = str(len(mism))
    judged = [r for r in rows if r["verdict"] == "pass" or r["verdict"].startswith("FAIL")]
    failed = [r for r in judged if r["verdict"].startswith("FAIL")]
    if judged:
        row["bias"] = ("pass %d/%d" % (len(judged), len(judged)) if not failed
                       else "FAIL %d/%d" % (len(failed), len(judged)))
        t = (kt_doc or {}).get("totals") or {}
        if kt_doc.get("launch_gate_mode") == "auto" and t.get("timed"):
            # KTIME_GATE=auto: how many of the judged samples were timed without a gate (the
            # launch found the GPU behind and was checked queued before its start event)
            row["bias"] += " (%s of %s ungated)" % (t.get("ungated", 0), t["timed"])

    # --- counts the program itself announced
    for key, n in expected_counts(ref_text):
        got = []
        for label, index, field in (("CUPTI", kc, "count"), ("ktime", kt, "calls")):
            if index is None or (label == "ktime" and key in graph_keys) or \
                    (label == "ktime" and any(g in key for g in graph_keys)):
                continue
            total, hits = count_by_key(index, key, field)
            if (hits != 1 and not (n == 0 and hits == 0)) or total != n:
                got.append("%s %d in %d kernel(s)" % (label, total, hits))
        if got:
            notes.append("expected %s x%d: %s" % (key, n, ", ".join(got)))
    # graph KEY LAUNCHES NODES: one ktime graph row with LAUNCHES calls and NODES kernel nodes.
    for key, launches, nodes in program_lines(ref_text, "graph", 3):
        if kt_doc is not None and (launches, nodes) not in graph_rows(kt_doc):
            notes.append("expected a ktime graph row (%s) with %d calls of %d kernel nodes; "
                         "rows: %s" % (key, launches, nodes, graph_rows(kt_doc)))
    # expect_device KEY DEV N: CUPTI saw N on device DEV; ktime timed every launch there but
    # those among the kernel's first `warmup` (counted per kernel, not per device).
    for key, dev, n in program_lines(ref_text, "expect_device", 3):
        if kc is not None:
            c = sum(int((v.get("per_device") or {}).get(str(dev), 0))
                    for name, v in kc.items() if key in name)
            if c != n:
                notes.append("expected %s x%d on device %d: CUPTI %d" % (key, n, dev, c))
        if kt is not None:
            hits = [v for name, v in kt.items() if key in name]
            t = sum(int(p.get("timed") or 0) for v in hits for p in v.get("per_device") or []
                    if p.get("device") == dev)
            w = warmup if isinstance(warmup, int) else 0
            if not (max(0, n - w) <= t <= n) or (n and not any(dev in (v.get("devices") or [])
                                                                 for v in hits)):
                notes.append("expected %s timed on device %d between %d and %d: ktime %d "
                             "(devices %s)" % (key, dev, max(0, n - w), n, t,
                                               [v.get("devices") for v in hits]))

    # --- markdown details
    details.append("### %s" % wl)
    details.append("")
    for r in runs:
        details.append("- `%s`: exit %s, %s s, stdout `%s`" % (
            r["kind"], r["rc"], r.get("seconds", "-"),
            os.path.basename(r["stdout"]) if r["stdout"] != "-" else "-"))
    if kt_doc:
        details.append("- ktime: warmup %s, totals %s" % (
            warmup, json.dumps(kt_doc.get("totals", {}), sort_keys=True)))
    if kc_doc:
        details.append("- CUPTI: %s records, %s incomplete, %s dropped, report via %s, "
                       "%s periodic flushes, %s atexit registrations" % (
                           kc_doc.get("records"), kc_doc.get("incomplete"),
                           kc_doc.get("dropped"), kc_doc.get("report_via"),
                           kc_doc.get("periodic_flushes"), kc_doc.get("atexit_registrations")))
    for n in notes:
        details.append("- note: %s" % n)
    details.append("")
    if rows:
        details.append("| kernel (mangled) | CUPTI n | ktime calls | warmup skipped | timed | "
                       "CUPTI mean us (post-warmup) | CUPTI median us | ktime mean us | "
                       "diff us | limit us | bias check |")
        details.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
        for r in rows:
            flag = "" if kt is None or kc is None or r["cupti_n"] == r["ktime_calls"] else " **≠**"
            details.append("| `%s` | %d | %d%s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                short(r["name"]), r["cupti_n"], r["ktime_calls"], flag,
                fmt(r["warmup_skipped"]), fmt(r["timed"]), fmt(r["cupti_mean"]),
                fmt(r["cupti_median"]), fmt(r["ktime_mean"]), fmt(r["diff"]),
                fmt(r["limit"], 1), r["verdict"]))
        details.append("")

    problems = ["%s: %s" % (wl, n) for n in notes]
    for r in mism:
        problems.append("%s: count mismatch %s: CUPTI %d, ktime %d"
                        % (wl, short(r["name"]), r["cupti_n"], r["ktime_calls"]))
    for r in failed:
        problems.append("%s: bias %s %s: ktime %.2f us, CUPTI %.2f us, diff %.2f (limit %.1f)"
                        % (wl, r["verdict"], short(r["name"]), float(r["ktime_mean"]),
                           r["cupti_mean"], r["diff"], r["limit"]))
    return row, details, problems


def table(rows):
    head = ["workload", "kernels", "launches CUPTI", "launches ktime", "mismatched kernels",
            "output identical", "mean-bias check", "notes"]
    keys = ["workload", "kernels", "cupti", "ktime", "mismatch", "identical", "bias"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [str(r[k]) for k in keys]
        cells.append("%d (see details)" % len(r["notes"]) if r["notes"] else "-")
        out.append("| " + " | ".join(c.replace("|", "/") for c in cells) + " |")
    return out


def main(argv):
    args = list(argv[1:])
    summary = header = None
    work = None
    while args:
        a = args.pop(0)
        if a == "--summary" and args:
            summary = args.pop(0)
        elif a == "--header" and args:
            header = args.pop(0)
        elif work is None and not a.startswith("--"):
            work = a
        else:
            print(__doc__, file=sys.stderr)
            return 2
    if work is None:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        runs = read_runs(work)
    except OSError as e:
        print("compare.py: cannot read runs: %s" % e, file=sys.stderr)
        return 2

    order, groups = [], {}
    for r in runs:
        if r["workload"] not in groups:
            order.append(r["workload"])
            groups[r["workload"]] = []
        groups[r["workload"]].append(r)

    trows, details, problems = [], [], []
    for wl in order:
        try:
            row, det, prob = analyse(wl, groups[wl])
        except Exception as e:  # one broken workload must not hide the others
            row = {"workload": wl, "kernels": "-", "cupti": "-", "ktime": "-", "mismatch": "-",
                   "identical": "-", "bias": "-", "notes": ["compare.py error: %r" % e]}
            det, prob = ["### %s" % wl, "", "compare.py error: %r" % e, ""], ["%s: %r" % (wl, e)]
        trows.append(row)
        details += det
        problems += prob

    tab = table(trows)
    if summary:
        with open(summary, "w") as f:
            f.write("# ktime GPU test results\n\n")
            if header and os.path.exists(header):
                f.write("```\n" + read_text(header).rstrip("\n") + "\n```\n\n")
            f.write("\n".join(tab) + "\n\n")
            f.write("Bias check: 0 <= ktime mean_us - CUPTI mean <= max(%.0f us, %.0f %% of CUPTI "
                    "mean), CUPTI mean over the launches ktime timed (its first warmup_skipped "
                    "launches left out, in correlation-id order).\n\n"
                    % (BIAS_FLOOR_US, 100 * BIAS_FRACTION))
            if problems:
                f.write("## Problems\n\n" + "\n".join("- " + p for p in problems) + "\n\n")
            f.write("## Details\n\n" + "\n".join(details) + "\n")

    print("== problems (%d)" % len(problems))
    for p in problems[:200]:
        print("  " + p)
    if len(problems) > 200:
        print("  ... %d more in summary.md" % (len(problems) - 200))
    print("")
    print("\n".join(tab))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
