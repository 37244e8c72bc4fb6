#!/usr/bin/env python3
"""ktime_tool.py - the offline tools on ktime's JSON reports: report, merge, diff, plot.

    ktime_tool.py report FILE.json [--format text|csv|json] [--top N] [--sort KEY] [--filter RE]
    ktime_tool.py merge FILES... [-o OUT] [--rank-rows N] [--world-size N] [--comm REGEX]
    ktime_tool.py diff BASE.json NEW.json [--threshold 5%] [--alpha 0.01] [--format text|json]
    ktime_tool.py plot FILE.json [NEW.json] [-o out.png|out.svg] [--top N]
    ktime_tool.py plot SERIES.jsonl [-o out.png|out.svg] [--top N]
    ktime_tool.py --selftest

`ktime report|merge|diff|plot ARGS` runs this file. Python 3 standard library only;
matplotlib is imported by `plot` alone. `report` prints through ktime-render, the library's
own text, CSV and JSON writers (so that a report's text is the library's, byte for byte), and
diff's table and plot's labels take kernel names shortened by it; `merge` runs ktime-merge,
the library's own merge (the same code as the job report); diff and plot compute here.
docs/tools.md describes each tool, the merged report's fields, the test `diff` uses and the
exit statuses: 0 done (diff: no significant regression), 1 diff found at least one, 2 a usage
or input error (one line on stderr, never a traceback).
"""

import argparse
import json
import math
import os
import signal
import subprocess
import sys
import textwrap

SCHEMAS = (1, 2)
FEW_SAMPLES = 10          # model.h: a kernel with fewer timed samples is flagged
NEAR_FLOOR_FACTOR = 3.0
# Per-kernel (and per-shape) counts: a merge adds them.
COUNT_FIELDS = ("calls", "warmup_skipped", "captured", "dropped", "failed", "incomplete",
                "timed", "ungated", "unsampled", "timed_by_nodes", "in_graph", "cupti_timed")
# Fields a merge computes anew from the merged sums.
DERIVED_FIELDS = ("total_ms", "total_estimated", "percent", "mean_us", "min_us", "max_us",
                  "stddev_us", "p50_us", "p90_us", "p99_us", "few_samples", "histogram",
                  "sum_us", "m2_us2", "near_floor", "per_device", "hw", "devices", "ranks",
                  "rank_spread")
IDENTITY_FIELDS = ("name", "name_bytes", "mangled", "mangled_bytes", "kind")


class KtoolError(Exception):
    """An input or usage error: one line on stderr, exit status 2."""


class RenderFailed(Exception):
    """ktime-render said why on stderr already: exit with this status."""


# ------------------------------------------------------------------ loading and checking

def is_count(v):
    return isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2 ** 63


# A report's numbers stay far from overflow, so that no sum or ratio of them is infinite.
NUM_LIMIT = 1e300


def is_num(v):
    return (isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
            and abs(v) < NUM_LIMIT)


def _cut_short(text, pos):
    """True when the parse error at pos is the end of a document that stops part way: brackets are
    still open (or a string is) and the error lies after the last bracket, comma or colon, so the
    text up to it is the start of a valid document (a cut inside a string, number or word)."""
    depth, in_str, esc, last = 0, False, False, -1
    for i, c in enumerate(text):
        if in_str:
            if esc:
                esc = False
            elif c == "\\":
                esc = True
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True
        elif c in "{[":
            depth, last = depth + 1, i
        elif c in "}]":
            depth, last = depth - 1, i
        elif c in ",:":
            last = i
    return (depth > 0 or in_str) and pos > last


# What a FILE of "-" read from standard input (once: a second "-" reads the same bytes).
_stdin = None


def read_input(path):
    """The bytes of path; "-" is standard input."""
    global _stdin
    if path == "-":
        if _stdin is None:
            _stdin = sys.stdin.buffer.read()
        return _stdin
    with open(path, "rb") as f:
        return f.read()


def load_json(path):
    try:
        data = read_input(path)
    except OSError as e:
        raise KtoolError("cannot read %s: %s" % (path, e.strerror or e))
    if not data.strip():
        raise KtoolError("%s: empty file, not a ktime report" % path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        if e.end == len(data) and "unexpected end" in str(e.reason):
            raise KtoolError("%s: truncated (a character cut short at byte %d)" % (path, e.start))
        raise KtoolError("%s: not UTF-8 (byte %d), not a ktime JSON report" % (path, e.start))
    def no_constant(word):
        raise ValueError("%s is not a JSON number (RFC 8259)" % word)
    try:
        return json.loads(text, parse_constant=no_constant)
    except json.JSONDecodeError as e:
        what = "truncated" if _cut_short(text, e.pos) else "not valid JSON"
        raise KtoolError("%s: %s (line %d, column %d: %s)" % (path, what, e.lineno, e.colno, e.msg))
    except (RecursionError, ValueError) as e:
        raise KtoolError("%s: not valid JSON (%s)" % (path, e))


def _need(cond, path, where, what):
    if not cond:
        raise KtoolError("%s: not a ktime report: %s %s" % (path, where, what))


def check_block(path, where, b, counts=("timed",)):
    """A block of statistics: counts, and sum/m2/min/max/mean numbers where present."""
    _need(isinstance(b, dict), path, where, "is not an object")
    for k in counts:
        _need(k in b, path, where, "has no '%s'" % k)
    for k, v in b.items():
        if k in COUNT_FIELDS or k == "device":
            _need(is_count(v), path, "%s.%s" % (where, k), "is %r, not a count" % (v,))
        elif k.endswith("_us") or k.endswith("_us2") or k.endswith("_ms") or k == "percent":
            _need(v is None or is_num(v), path, "%s.%s" % (where, k), "is %r, not a number" % (v,))


# ------------------------------------------------------------------ the report's shape
#
# What each field a report may have must hold, for the fields this tool reads (a field it does
# not know is let be). A spec is a kind ("count", "int", "num", "str", "bool", "any"), or a
# dict of field specs (an object), or ("list", spec); "?" after a kind allows null, "!" before
# a field's name makes it required.

STATS = {"total_ms": "num+?", "percent": "num+?", "mean_us": "num+?", "min_us": "num+?",
         "max_us": "num+?", "stddev_us": "num+?", "sum_us": "num+?", "m2_us2": "num+?",
         "p50_us": "num+?", "p90_us": "num+?", "p99_us": "num+?", "histogram": "histogram?",
         "outside_range": "count"}
COUNTS = {k: "count" for k in COUNT_FIELDS}
SHAPE = dict(STATS, **{"!grid": ("list", "count"), "!block": ("list", "count"),
                       "!shared_bytes": "count", "!timed": "count"})
OTHER_SHAPES = dict(STATS, **{"!shapes": "count", "untracked": "bool", "!timed": "count"})
RANK_ENTRY = {"input": "count", "rank": "int?", "host": "str?", "pid": "int?", "calls": "count",
              "timed": "count", "total_ms": "num?", "mean_us": "num?"}
SPREAD_END = {"input": "count", "rank": "int?", "!label": "str", "!total_ms": "num+"}
KERNEL = dict(STATS, **{k: v for k, v in COUNTS.items() if k not in ("calls", "timed")}, **{
    "!name": "str", "name_bytes": "str", "!mangled": "str", "kind": "str",
    "devices": ("list", "count"), "!calls": "count", "!timed": "count", "!total_ms": "num+",
    "!percent": "num+",
    "total_estimated": "bool", "few_samples": "bool", "near_floor": "bool",
    "per_device": ("list", dict(STATS, **{"!device": "count", "!timed": "count"})),
    "hw": dict(STATS, **{"!timed": "count", "bias_us": "num?"}),
    "shapes": ("list", SHAPE), "other_shapes": dict(OTHER_SHAPES, nullable=True),
    "ranks": ("list", RANK_ENTRY),
    "rank_spread": {"ranks": "count", "!slowest": SPREAD_END, "!fastest": SPREAD_END,
                    "ratio": "num?", "nullable": True}})
MEMOP = dict(STATS, **{"!kind": "str", "!calls": "count", "!timed": "count", "!bytes": "count",
                       "!timed_bytes": "count", "gb_per_s": "num?"},
             **{k: "count" for k in ("warmup_skipped", "captured", "dropped", "failed",
                                     "incomplete", "outside_range", "unsampled", "ungated")})
RANGE_KERNEL = dict(STATS, **{"!name": "str", "!mangled": "str", "kind": "str", "!timed": "count"})
RANGES = {"attribution": "str", "nvtx": "str", "unmatched_pops": "count", "too_deep": "count",
          "!by_name": ("list", {"name": "str?", "closed": "count", "open_at_exit": "count",
                                 "wall_ms": "num", "timed": "count", "total_ms": "num",
                                 "kernels": ("list", RANGE_KERNEL)}),
          "nullable": True}
ORIGIN = {"input": "count", "rank": "int?", "host": "str?"}
GPU_BUSY = {"unplaced": "count",
            "devices": ("list", dict(ORIGIN, **{"!device": "count", "method": "str",
                                                "busy_ms": "num", "span_ms": "num"})),
            "ranges": ("list", {"name": "str?", "name_bytes": "str", "wall_ms": "num",
                                "busy_ms": "num", "busy_percent": "num?", "intervals": "count"}),
            "nullable": True}
COMMUNICATION = {"pattern": "str",
                 "devices": ("list", dict(ORIGIN, **{"!device": "count", "method": "str",
                                                     "kernels": "count", "comm_ms": "num"})),
                 "least_waiting": "int?", "nullable": True}
DEVICE = {"!ordinal": "count", "name": "str", "name_bytes": "str", "uuid": "str?",
          "driver_version": "count", "driver": "str?", "floor_events_us": "num?",
          "floor_hw_us": "num?", "host": "str?", "host_ordinal": "count"}
REPORT = {
    "ktime_version": "str", "ktime_build": "str?", "command": ("list", "str"),
    "command_bytes": ("list", "str"), "host": "str?", "host_bytes": "str", "rank": "int?",
    "local_rank": "int?", "world_size": "int?", "start_time": "str?", "end_time": "str?",
    "pid": "int?", "!timing_method": "str", "launch_gate": "bool", "launch_gate_mode": "str?",
    "launch_gate_requested": "str?", "launch_gate_unavailable_contexts": "count",
    "contexts": "count", "!warmup": "count", "group": "str?",
    "timer": {"requested": "str?", "used": "str?", "note": "str?", "cupti_library": "str?",
              "cupti_records_dropped": "count", "cupti_buffers_refused": "count", "nullable": True},
    "capture": {"mode": "str", "starts": "count", "stops": "count", "ranges": "count",
                "open_at_exit": "bool", "nullable": True},
    "flush_l2": {"bytes": "count", "flushes": "count", "refused": "count", "contexts": "count",
                 "contexts_without_buffer": "count", "nullable": True},
    "conditions": {"text": ("list", "str"), "nullable": True},
    "!devices": ("list", DEVICE), "!kernels": ("list", KERNEL),
    "memops": ("list?", MEMOP), "ranges": RANGES, "note": "str?",
    "gpu_busy": GPU_BUSY, "communication": COMMUNICATION,
    "merged_from": ("list", {"rank": "int?", "host": "str?", "pid": "int?", "file": "str?"}),
    "!totals": dict({k: "count" for k in ("launches_seen", "timed", "ungated", "warmup_skipped",
                                           "captured", "dropped", "failed_launches",
                                           "incomplete_at_exit", "in_graph", "timed_by_nodes",
                                           "cupti_timed", "unsampled", "outside_range",
                                           "sample")},
                    **{"!timed_total_ms": "num+", "dropped_reasons": "counts"}),
}


def _kind_ok(kind, v):
    if kind == "count":
        return is_count(v)
    if kind == "int":
        return isinstance(v, int) and not isinstance(v, bool) and abs(v) < 2 ** 63
    if kind == "num":
        return is_num(v)
    if kind == "num+":
        return is_num(v) and v >= 0
    if kind == "str":
        return isinstance(v, str)
    if kind == "bool":
        return isinstance(v, bool)
    if kind == "counts":
        return isinstance(v, dict) and all(is_count(c) for c in v.values())
    if kind == "histogram":
        return (isinstance(v, dict) and is_num(v.get("gamma")) and v["gamma"] > 1
                and is_num(v.get("first_edge_us")) and v["first_edge_us"] > 0
                and isinstance(v.get("buckets"), list)
                and all(isinstance(b, list) and len(b) == 3 and is_count(b[0]) and is_num(b[1])
                        and is_count(b[2]) for b in v["buckets"]))
    return True  # "any"


_WORDS = {"count": "a count", "int": "an integer", "num": "a finite number",
          "num+": "a finite number, not negative", "str": "a string",
          "bool": "true or false", "counts": "an object of counts",
          "histogram": "a histogram (gamma, first_edge_us, buckets of [index, edge, count])"}


def check_shape(path, where, v, spec):
    """Raises KtoolError naming the first field of v (at where) that spec does not allow."""
    if isinstance(spec, str):
        kind, nullable = spec.rstrip("?"), spec.endswith("?")
        if (v is None and nullable) or _kind_ok(kind, v):
            return
        raise KtoolError("%s: not a ktime report: %s is %s, not %s"
                         % (path, where, _short(v), _WORDS.get(kind, kind)))
    if isinstance(spec, tuple):
        if v is None and spec[0].endswith("?"):
            return
        _need(isinstance(v, list), path, where, "is %s, not a list" % _short(v))
        for i, e in enumerate(v):
            check_shape(path, "%s[%d]" % (where, i), e, spec[1])
        return
    if v is None and spec.get("nullable"):
        return
    _need(isinstance(v, dict), path, where, "is %s, not an object" % _short(v))
    for key, sub in spec.items():
        if key == "nullable":
            continue
        name = key.lstrip("!")
        at = "%s.%s" % (where, name) if where else name
        if name not in v:
            _need(not key.startswith("!"), path, where or "the top level", "has no '%s'" % name)
            continue
        check_shape(path, at, v[name], sub)


def _short(v):
    t = repr(v)
    return t if len(t) <= 40 else t[:37] + "..."


# The keys a report written before they were renamed has (docs/report-format.md, "Changes within
# version 2"): "range" is the capture range's "capture", "regions" the ranges' "ranges", and
# the list in it, "ranges", is "by_name" (their earlier names).
EARLIER_KEYS = {"range": "capture", "regions": "ranges"}


def new_keys(r):
    """r with its keys' earlier names replaced by their names, in their place; a key under
    both names keeps the new one."""
    if not isinstance(r, dict) or not any(k in r for k in EARLIER_KEYS):
        return r
    out = {}
    for k, v in r.items():
        if k in EARLIER_KEYS:
            if EARLIER_KEYS[k] in r:
                continue
            if k == "regions" and isinstance(v, dict) and "by_name" not in v:  # earlier name
                v = {("by_name" if kk == "ranges" else kk): vv for kk, vv in v.items()}
            k = EARLIER_KEYS[k]
        out[k] = v
    return out


def check_report(path, r, allow_merged=True):
    """Raises KtoolError unless r looks like a ktime JSON report this tool can read. Returns
    it, with the new names of keys written under their earlier names."""
    _need(isinstance(r, dict), path, "the top level", "is not an object")
    r = new_keys(r)
    if "ktime_diff" in r:
        raise KtoolError("%s: is a ktime diff, not a report" % path)
    _need("schema_version" in r, path, "the top level", "has no schema_version")
    sv = r["schema_version"]
    if sv not in SCHEMAS or isinstance(sv, bool):
        raise KtoolError("%s: schema_version %r is not one this tool reads (%s)"
                         % (path, sv, ", ".join(map(str, SCHEMAS))))
    for k in ("kernels", "totals", "devices", "warmup", "timing_method"):
        _need(k in r, path, "the top level", "has no '%s'" % k)
    _need(isinstance(r["kernels"], list), path, "kernels", "is not a list")
    _need(isinstance(r["devices"], list), path, "devices", "is not a list")
    _need(isinstance(r["totals"], dict), path, "totals", "is not an object")
    _need(is_count(r["warmup"]), path, "warmup", "is not a count")
    _need(isinstance(r["timing_method"], str), path, "timing_method", "is not a string")
    for i, d in enumerate(r["devices"]):
        w = "devices[%d]" % i
        _need(isinstance(d, dict), path, w, "is not an object")
        _need(is_count(d.get("ordinal")), path, w + ".ordinal", "is not a count")
        _need(isinstance(d.get("name", ""), str), path, w + ".name", "is not a string")
    for i, k in enumerate(r["kernels"]):
        w = "kernels[%d]" % i
        check_block(path, w, k, counts=("calls", "timed"))
        for f in ("name", "mangled"):
            _need(isinstance(k.get(f), str), path, "%s.%s" % (w, f), "is not a string")
        _need(is_num(k.get("total_ms")), path, w + ".total_ms", "is not a number")
        if k["timed"]:
            for f in ("sum_us", "m2_us2", "mean_us", "min_us", "max_us"):
                _need(is_num(k.get(f)), path, "%s.%s" % (w, f), "is not a number")
        _need(isinstance(k.get("per_device", []), list), path, w + ".per_device", "is not a list")
        for j, d in enumerate(k.get("per_device", [])):
            check_block(path, "%s.per_device[%d]" % (w, j), d, counts=("device", "timed"))
        if "hw" in k:
            check_block(path, w + ".hw", k["hw"])
        h = k.get("histogram")
        if h is not None:
            _need(isinstance(h, dict) and isinstance(h.get("buckets"), list), path,
                  w + ".histogram", "has no bucket list")
            for b in h["buckets"]:
                _need(isinstance(b, list) and len(b) == 3 and is_count(b[0]) and is_num(b[1])
                      and is_count(b[2]), path, w + ".histogram.buckets", "holds %r" % (b,))
    ms = r.get("memops")
    _need(ms is None or isinstance(ms, list), path, "memops", "is neither null nor a list")
    for i, m in enumerate(ms or []):
        w = "memops[%d]" % i
        check_block(path, w, m, counts=("calls", "timed", "bytes", "timed_bytes"))
        _need(isinstance(m.get("kind"), str), path, w + ".kind", "is not a string")
        if m["timed"]:
            for f in ("sum_us", "m2_us2", "mean_us", "min_us", "max_us", "total_ms"):
                _need(is_num(m.get(f)), path, "%s.%s" % (w, f), "is not a number")
    rg = r.get("ranges")
    _need(rg is None or isinstance(rg, dict) and isinstance(rg.get("by_name"), list), path, "ranges",
          "is neither null nor an object with a list of ranges")
    for i, g in enumerate((rg or {}).get("by_name", [])):
        w = "ranges.by_name[%d]" % i
        _need(isinstance(g, dict) and (g.get("name") is None or isinstance(g.get("name"), str)),
              path, w, "is not a range with a name")
        for j, k in enumerate(g.get("kernels") or []):
            check_block(path, "%s.kernels[%d]" % (w, j), k, counts=("timed",))
            _need(isinstance(k.get("mangled"), str) and isinstance(k.get("name"), str), path,
                  "%s.kernels[%d]" % (w, j), "has no name")
    for k, v in r["totals"].items():
        if k != "dropped_reasons" and k != "timed_total_ms" and k != "sample":
            _need(is_count(v), path, "totals." + k, "is %r, not a count" % (v,))
    _need(is_num(r["totals"].get("timed_total_ms")), path, "totals.timed_total_ms", "is not a number")
    check_shape(path, "", r, REPORT)
    # A block with samples has their statistics (the quantiles and histogram may be null).
    blocks = []
    for i, k in enumerate(r["kernels"]):
        w = "kernels[%d]" % i
        blocks += [("%s.per_device[%d]" % (w, j), d, ()) for j, d in enumerate(k.get("per_device") or [])]
        blocks += [("%s.shapes[%d]" % (w, j), d, ()) for j, d in enumerate(k.get("shapes") or [])]
        if k.get("other_shapes"):
            blocks.append((w + ".other_shapes", k["other_shapes"], ()))
        if k.get("hw"):
            blocks.append((w + ".hw", k["hw"], ("mean_us",)))
    for i, g in enumerate((rg or {}).get("by_name") or []):
        blocks += [("ranges.by_name[%d].kernels[%d]" % (i, j), k, ())
                   for j, k in enumerate(g.get("kernels") or [])]
    for where, b, more in blocks:
        if not b["timed"]:
            continue
        for f in ("sum_us", "m2_us2", "min_us", "max_us") + more:
            _need(is_num(b.get(f)), path, "%s.%s" % (where, f), "is not a number")
        for f in ("mean_us", "stddev_us", "percent", "total_ms"):
            _need(f not in b or is_num(b[f]), path, "%s.%s" % (where, f), "is not a number")
    if "merged_from" in r and not allow_merged:
        raise KtoolError("%s: is a merged report; merge the reports it was made from instead" % path)
    return r


def load_report(path, allow_merged=True):
    return check_report(path, load_json(path), allow_merged)


# ------------------------------------------------------------------ names, and the library's writers

# `ktime report` prints a report with the library's own writers: ktime-render (make installs it
# in $(pkglibexecdir), ../../libexec/ktime from this file's folder in the default layout), found
# through $KTIME_RENDER, which the ktime launcher sets.
RENDER_BESIDE = os.path.join("..", "..", "libexec", "ktime", "ktime-render")


def find_render(verb):
    env = os.environ.get("KTIME_RENDER")
    if env:
        if os.path.isfile(env) and os.access(env, os.X_OK):
            return env
        raise KtoolError("ktime %s: KTIME_RENDER=%s is not an executable file" % (verb, env))
    here = os.path.dirname(os.path.realpath(__file__))
    path = os.path.normpath(os.path.join(here, RENDER_BESIDE))
    if os.path.isfile(path) and os.access(path, os.X_OK):
        return path
    raise KtoolError("ktime %s: ktime-render not found (no %s; run this through the ktime launcher, "
                     "or set KTIME_RENDER)" % (verb, path))


def run_render(verb, args, data=None, stdin=None):
    """Runs ktime-render ARGS: its output goes to ours, or (data given, bytes for its input) is
    returned; stdin (bytes) is its input otherwise. Its own errors are one line on stderr
    already: they end this with its status."""
    exe = find_render(verb)
    sys.stdout.flush()
    try:
        p = subprocess.run([exe] + args, input=data if data is not None else stdin,
                           stdout=subprocess.PIPE if data is not None else None)
    except OSError as e:
        raise KtoolError("ktime %s: cannot run %s: %s" % (verb, exe, e.strerror or e))
    if p.returncode == -signal.SIGPIPE:
        raise BrokenPipeError()
    if p.returncode != 0:
        raise RenderFailed(p.returncode if p.returncode > 0 else 2)
    return p.stdout


def short_names(verb, rows, width=None):
    """The Kernel column of the text report for rows (dicts with name, name_bytes and kind):
    [(short name, reference number)], from ktime-render, the library's own code."""
    ins = []
    for k in rows:
        e = {"name": k.get("name") if isinstance(k.get("name"), str) else "",
             "kind": k.get("kind", "kernel")}
        if isinstance(k.get("name_bytes"), str):
            e["name_bytes"] = k["name_bytes"]
        ins.append(e)
    args = ["--name-column"] + (["--width", str(width)] if width else [])
    out = run_render(verb, args, json.dumps(ins).encode("ascii"))
    res = []
    for line in out.decode("ascii").splitlines():
        ref, _, hx = line.partition(" ")
        res.append((bytes.fromhex(hx).decode("utf-8", "surrogateescape"), int(ref)))
    if len(res) != len(rows):
        raise KtoolError("ktime %s: ktime-render gave %d names for %d" % (verb, len(res), len(rows)))
    return res


def raw(obj, key):
    """obj[key] as the library had it: the bytes (from KEY_bytes, when it was not UTF-8),
    as a str holding those bytes (surrogateescape), for output in bytes."""
    hx = obj.get(key + "_bytes")
    if isinstance(hx, str):
        try:
            return bytes.fromhex(hx).decode("utf-8", "surrogateescape")
        except ValueError:
            pass
    v = obj.get(key)
    return v if isinstance(v, str) else ""


def b(s):
    return s.encode("utf-8", "surrogateescape")


def total_ms_of(b):
    """A block's total_ms, or its samples' sum where it has none."""
    return b["total_ms"] if is_num(b.get("total_ms")) else (b.get("sum_us") or 0.0) / 1000.0


def rank_label(e, i):
    return str(e["rank"]) if e.get("rank") is not None else "#%d" % i


# ------------------------------------------------------------------ merge

def find_merge(verb):
    """ktime-merge, the library's own merge (the same code as the job report libktime writes):
    beside ktime-render (KTIME_RENDER's, or the launcher's libexec folder)."""
    path = os.path.join(os.path.dirname(find_render(verb)), "ktime-merge")
    if os.path.isfile(path) and os.access(path, os.X_OK):
        return path
    raise KtoolError("ktime %s: ktime-merge not found (no %s beside ktime-render)" % (verb, path))


# ------------------------------------------------------------------ statistics for diff

def betacf(a, bb, x):
    """The continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + bb, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 10000):
        m2 = 2 * m
        aa = m * (bb - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return h


def betainc(a, bb, x):
    """The regularized incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    lbt = (math.lgamma(a + bb) - math.lgamma(a) - math.lgamma(bb)
           + a * math.log(x) + bb * math.log1p(-x))
    if x < (a + 1.0) / (a + bb + 2.0):
        return math.exp(lbt) * betacf(a, bb, x) / a
    return 1.0 - math.exp(lbt) * betacf(bb, a, 1.0 - x) / bb


def t_two_sided_p(t, df):
    """P(|T| >= |t|) for Student's t with df degrees of freedom."""
    if math.isnan(t) or df <= 0:
        return float("nan")
    if math.isinf(t):
        return 0.0
    return betainc(df / 2.0, 0.5, df / (df + t * t))


def t_cdf(t, df):
    p = t_two_sided_p(t, df)
    return 1.0 - p / 2.0 if t >= 0 else p / 2.0


def welch(n1, mean1, m21, n2, mean2, m22):
    """Welch's t-test from two aggregates: (t, df, two-sided p), or None below 2 samples."""
    if n1 < 2 or n2 < 2:
        return None
    v1, v2 = m21 / (n1 - 1), m22 / (n2 - 1)
    a, c = v1 / n1, v2 / n2
    se2 = a + c
    if se2 <= 0:
        if mean1 == mean2:
            return (0.0, float(n1 + n2 - 2), 1.0)
        return (math.copysign(math.inf, mean2 - mean1), float(n1 + n2 - 2), 0.0)
    t = (mean2 - mean1) / math.sqrt(se2)
    den = (a * a / (n1 - 1) if a else 0.0) + (c * c / (n2 - 1) if c else 0.0)
    df = se2 * se2 / den if den > 0 else float(n1 + n2 - 2)
    return (t, df, t_two_sided_p(t, df))


# ------------------------------------------------------------------ diff

def pct(new, old):
    if old is None or new is None:
        return None
    if old == 0:
        return 0.0 if new == 0 else None
    return 100.0 * (new - old) / old


def parse_threshold(s):
    t = s.strip()
    if t.endswith("%"):
        t = t[:-1]
    try:
        v = float(t)
    except ValueError:
        raise KtoolError("ktime diff: --threshold '%s' is not a percentage (e.g. 5%%)" % s)
    if not math.isfinite(v) or v < 0:
        raise KtoolError("ktime diff: --threshold '%s' is not a percentage (e.g. 5%%)" % s)
    return v


def diff_reports(bpath, base, npath, new, threshold, alpha):
    for key, what in (("schema_version", "schema versions"), ("warmup", "warmup settings"),
                      ("timing_method", "timers")):
        if base[key] != new[key]:
            raise KtoolError("ktime diff: %s has %s %s, %s has %s: cannot compare reports of "
                             "different %s" % (bpath, key, json.dumps(base[key]), npath,
                                               json.dumps(new[key]), what))
    bk = {(k.get("kind", "kernel"), k["mangled"]): k for k in base["kernels"]}
    nk = {(k.get("kind", "kernel"), k["mangled"]): k for k in new["kernels"]}
    rows, regressions, improvements = [], 0, 0
    for key, k in bk.items():
        if key not in nk:
            continue
        n = nk[key]
        e = {"name": k["name"], "mangled": k["mangled"], "kind": key[0],
             "base_timed": k["timed"], "new_timed": n["timed"],
             "base_total_ms": k["total_ms"], "new_total_ms": n["total_ms"],
             "base_mean_us": k["mean_us"] if k["timed"] else None,
             "new_mean_us": n["mean_us"] if n["timed"] else None,
             "base_p50_us": k.get("p50_us"), "new_p50_us": n.get("p50_us")}
        if "name_bytes" in k:
            e["name_bytes"] = k["name_bytes"]
        e["mean_change_pct"] = pct(e["new_mean_us"], e["base_mean_us"])
        e["median_change_pct"] = pct(e["new_p50_us"], e["base_p50_us"])
        w = None
        if k["timed"] and n["timed"]:
            w = welch(k["timed"], k["mean_us"], k.get("m2_us2", 0.0), n["timed"], n["mean_us"],
                      n.get("m2_us2", 0.0))
        e["t"], e["df"], e["p"] = (w if w else (None, None, None))
        if e["t"] is not None and math.isinf(e["t"]):
            e["t"] = None  # no spread in either: the means differ exactly (p 0)
        e["enough_samples"] = k["timed"] >= FEW_SAMPLES and n["timed"] >= FEW_SAMPLES
        e["significant"] = e["p"] is not None and e["p"] < alpha
        ch = e["mean_change_pct"]
        e["regression"] = bool(e["enough_samples"] and e["significant"] and ch is not None and ch > threshold)
        e["improvement"] = bool(e["enough_samples"] and e["significant"] and ch is not None and ch < -threshold)
        regressions += e["regression"]
        improvements += e["improvement"]
        rows.append(e)

    def brief(k):
        e = {"name": k["name"], "mangled": k["mangled"], "kind": k.get("kind", "kernel"),
             "calls": k["calls"], "timed": k["timed"], "total_ms": k["total_ms"],
             "mean_us": k["mean_us"] if k["timed"] else None}
        if "name_bytes" in k:
            e["name_bytes"] = k["name_bytes"]
        return e
    bt, nt = base["totals"]["timed_total_ms"], new["totals"]["timed_total_ms"]
    return {"ktime_diff": 1, "base": bpath, "new": npath,
            "test": "Welch's t-test on each kernel's mean, from timed, mean_us and m2_us2",
            "threshold_pct": threshold, "alpha": alpha, "min_samples": FEW_SAMPLES,
            "kernels": rows,
            "new_kernels": [brief(k) for key, k in nk.items() if key not in bk],
            "vanished_kernels": [brief(k) for key, k in bk.items() if key not in nk],
            "total": {"base_ms": bt, "new_ms": nt, "change_pct": pct(nt, bt)},
            "regressions": regressions, "improvements": improvements}


def fmt_pct(v):
    return "%+8.2f%%" % v if v is not None else "%9s" % "-"


def fmt_us(v):
    return "%11.3f" % v if v is not None else "%11s" % "-"


def render_diff_text(d):
    out = ["ktime diff: %s -> %s\n" % (d["base"], d["new"]),
           "test     Welch's t-test on each kernel's mean (from timed, mean_us and m2_us2), two-sided;\n"
           "         a regression: mean up more than %g%%, p < %g, at least %d samples in both\n\n"
           % (d["threshold_pct"], d["alpha"], d["min_samples"])]
    out.append("%11s %11s %9s %11s %11s %9s %9s  %-11s %s\n" % (
        "Base us", "New us", "Mean", "Base med", "New med", "Median", "p", "Verdict", "Kernel"))
    shorts = [sh for sh, _ in short_names("diff", d["kernels"])]
    for e, s in zip(d["kernels"], shorts):
        if e["regression"]:
            verdict = "REGRESSION"
        elif e["improvement"]:
            verdict = "faster"
        elif not e["enough_samples"]:
            verdict = "few samples"
        elif e["significant"]:
            verdict = "within"
        else:
            verdict = "same"
        p = "%9.2g" % e["p"] if e["p"] is not None else "%9s" % "-"
        out.append("%s %s %s %s %s %s %s  %-11s %s\n" % (
            fmt_us(e["base_mean_us"]), fmt_us(e["new_mean_us"]), fmt_pct(e["mean_change_pct"]),
            fmt_us(e["base_p50_us"]), fmt_us(e["new_p50_us"]), fmt_pct(e["median_change_pct"]),
            p, verdict, s))
    if not d["kernels"]:
        out.append("(no kernel in both reports)\n")
    for title, lst in (("new kernels (only in %s)" % d["new"], d["new_kernels"]),
                       ("vanished kernels (only in %s)" % d["base"], d["vanished_kernels"])):
        if lst:
            out.append("\n%s\n" % title)
            shorts = [sh for sh, _ in short_names("diff", lst)]
            for e, s in zip(lst, shorts):
                out.append("%12.3f ms %9d timed  %s\n" % (e["total_ms"], e["timed"], s))
    t = d["total"]
    out.append("\ntotal    %.3f ms -> %.3f ms (%s)\n" % (t["base_ms"], t["new_ms"],
                                                       fmt_pct(t["change_pct"]).strip()))
    out.append("verdict  %d kernel%s regressed significantly beyond %g%%, %d got faster\n" % (
        d["regressions"], "" if d["regressions"] == 1 else "s", d["threshold_pct"], d["improvements"]))
    return "".join(out)


# ------------------------------------------------------------------ plot

def need_matplotlib():
    try:
        import matplotlib
        matplotlib.use("Agg")
        matplotlib.rcParams["svg.fonttype"] = "none"  # text stays text in an SVG
        import matplotlib.pyplot as plt
        return plt
    except ImportError as e:
        raise KtoolError("ktime plot: needs matplotlib, which %s (Python %s) cannot import (%s): "
                         "pip install matplotlib for it, apt-get install python3-matplotlib, or "
                         "set KTIME_PYTHON to a Python that has it"
                         % (sys.executable or "python3", sys.version.split()[0], e))


def plot_labels(names):
    """Names shortened to 48 bytes as the text report shortens them, for a plot's axis."""
    rows = [{"name": "", "name_bytes": b(n).hex(), "kind": "kernel"} for n in names]
    return [s.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
            for s, _ in short_names("plot", rows, 48)]


def busy_bars(r):
    """Per GPU timeline of gpu_busy (and of a merged report, per input): its label and its
    span cut into compute alone, communication overlapping compute, communication exposed and
    idle, in ms; [] when the report has no gpu_busy."""
    busy = r.get("gpu_busy") or {}
    comm = {(e["device"], e["method"], e.get("input")): e
            for e in (r.get("communication") or {}).get("devices", [])}
    bars = []
    for d in busy.get("devices", []):
        c = comm.get((d["device"], d["method"], d.get("input")))
        cb = c["comm_busy_ms"] if c else 0.0
        ov = c["overlap_ms"] if c else 0.0
        who = "gpu %d" % d["device"]
        if d.get("rank") is not None:
            who = "rank %d %s" % (d["rank"], who)
        elif d.get("input") is not None:
            who = "input %d %s" % (d["input"], who)
        bars.append(("%s (%s)" % (who, d["method"]),
                     [max(d["busy_ms"] - cb, 0.0), ov, max(cb - ov, 0.0), max(d["span_ms"] - d["busy_ms"], 0.0)]))
    return bars


def plot_busy(ax, bars):
    """The busy/idle bar of each GPU: the share of its span in each part (busy_bars)."""
    parts = (("compute (no communication)", "#4878a8"), ("communication overlapping compute", "#68a868"),
             ("communication exposed", "#d08030"), ("idle", "#d0d0d0"))
    y = list(range(len(bars)))[::-1]
    left = [0.0] * len(bars)
    for j, (label, color) in enumerate(parts):
        widths = [100.0 * v[j] / sum(v) if sum(v) > 0 else 0.0 for _, v in bars]
        ax.barh(y, widths, left=left, color=color, label=label)
        left = [a + w for a, w in zip(left, widths)]
    ax.set_yticks(y)
    ax.set_yticklabels([label for label, _ in bars], fontsize=8)
    ax.set_xlim(0, 100)
    ax.set_xlabel("share of the GPU's span, first kernel start to last end (%)")
    ax.set_title("where the GPU time went: busy, communication overlap, idle (gpu_busy)")
    ax.legend(fontsize=7, loc="lower right", ncol=2)


def with_busy(plt, fig_rows, r, draw):
    """A figure of draw(axes) over a row of busy bars when r has gpu_busy."""
    bars = busy_bars(r)
    if not bars:
        return None
    fig = plt.figure(figsize=(12, fig_rows + 1.5 + 0.35 * len(bars)))
    gs = fig.add_gridspec(2, 2, height_ratios=[fig_rows, 1 + 0.35 * len(bars)])
    draw(fig, gs)
    plot_busy(fig.add_subplot(gs[1, :]), bars)
    return fig


def plot_report(r, plt, top):
    ks = [k for k in r["kernels"] if k["timed"] > 0][:top]
    if not ks:
        raise KtoolError("ktime plot: the report has no timed kernel to plot")
    labels = plot_labels([raw(k, "name") for k in ks])[::-1]
    holder = {}

    def draw(fig, gs):
        a1 = fig.add_subplot(gs[0, 0])
        holder["axes"] = (a1, fig.add_subplot(gs[0, 1], sharey=a1))

    fig = with_busy(plt, 1.2 + 0.4 * len(ks), r, draw)
    if fig:
        a1, a2 = holder["axes"]
        plt.setp(a2.get_yticklabels(), visible=False)
    else:
        fig, (a1, a2) = plt.subplots(1, 2, sharey=True, figsize=(12, 1.2 + 0.4 * len(ks)),
                                     gridspec_kw={"width_ratios": [1, 1]})
    y = list(range(len(ks)))
    a1.barh(y, [k["percent"] for k in ks][::-1], color="#4878a8")
    a1.set_yticks(y)
    a1.set_yticklabels(labels, fontsize=8)
    a1.set_xlabel("share of GPU time (%)")
    a1.set_title("top %d kernels by total time" % len(ks))
    med = [k.get("p50_us") if k.get("p50_us") is not None else k["mean_us"] for k in ks][::-1]
    p99 = [k.get("p99_us") if k.get("p99_us") is not None else k["max_us"] for k in ks][::-1]
    a2.hlines(y, med, p99, color="#a84848", linewidth=2, label="p50 to p99")
    a2.plot(med, y, "o", color="#a84848", markersize=4)
    a2.plot([k["mean_us"] for k in ks][::-1], y, "|", color="black", markersize=10, label="mean")
    a2.set_xscale("log")
    a2.set_xlabel("duration per launch (us)")
    a2.legend(fontsize=8)
    a2.set_title("p50 to p99, mean")
    return fig


def plot_merged(r, plt, top):
    ks = [k for k in r["kernels"] if k.get("ranks")][:top]
    inputs = r["merged_from"]
    if not ks:
        raise KtoolError("ktime plot: the merged report has no kernel to plot")
    grid = []
    for k in ks:
        row = [0.0] * len(inputs)
        for e in k["ranks"]:
            row[e["input"]] = e["total_ms"]
        mean = sum(row) / len(row)
        grid.append([v / mean if mean > 0 else 0.0 for v in row])
    holder = {}
    fig = with_busy(plt, 1.2 + 0.4 * len(ks), r,
                    lambda f, gs: holder.setdefault("ax", f.add_subplot(gs[0, :])))
    if fig:
        ax = holder["ax"]
    else:
        fig, ax = plt.subplots(figsize=(2 + 0.5 * len(inputs), 1.2 + 0.4 * len(ks)))
    im = ax.imshow(grid, aspect="auto", cmap="RdBu_r", vmin=0, vmax=2)
    ax.set_xticks(range(len(inputs)))
    ax.set_xticklabels([rank_label(e, i) for i, e in enumerate(inputs)], fontsize=8)
    ax.set_xlabel("rank")
    ax.set_yticks(range(len(ks)))
    ax.set_yticklabels(plot_labels([raw(k, "name") for k in ks]), fontsize=8)
    ax.set_title("each kernel's total time per rank, over its mean across ranks")
    fig.colorbar(im, ax=ax, label="total / mean across ranks")
    return fig


def plot_diff(d, plt, top):
    rows = [e for e in d["kernels"] if e["mean_change_pct"] is not None]
    rows.sort(key=lambda e: -abs(e["mean_change_pct"]))
    rows = rows[:top]
    if not rows:
        raise KtoolError("ktime plot: the diff has no kernel in both reports to plot")
    fig, ax = plt.subplots(figsize=(10, 1.2 + 0.4 * len(rows)))
    y = list(range(len(rows)))[::-1]
    colors = ["#c03030" if e["regression"] else "#30a040" if e["improvement"] else "#909090"
              for e in rows]
    ax.barh(y, [e["mean_change_pct"] for e in rows], color=colors)
    ax.set_yticks(y)
    ax.set_yticklabels(plot_labels([raw(e, "name") for e in rows]), fontsize=8)
    ax.axvline(0, color="black", linewidth=0.8)
    for s in (d["threshold_pct"], -d["threshold_pct"]):
        ax.axvline(s, color="black", linewidth=0.5, linestyle=":")
    ax.set_xlabel("change in mean (%%); red: significant regression beyond %g%%, green: faster"
                  % d["threshold_pct"])
    ax.set_title("%s -> %s" % (os.path.basename(d["base"]), os.path.basename(d["new"])))
    return fig


# ------------------------------------------------------------------ commands

def write_out(data, path=None):
    """data: str (surrogate-escaped bytes allowed) to stdout, or to path."""
    raw_bytes = data.encode("utf-8", "surrogateescape")
    if path and path != "-":
        try:
            with open(path, "wb") as f:
                f.write(raw_bytes)
        except OSError as e:
            raise KtoolError("cannot write %s: %s" % (path, e.strerror or e))
    else:
        sys.stdout.buffer.write(raw_bytes)
        sys.stdout.flush()


def dump_json(obj):
    """obj as JSON text; never NaN or Infinity, which are not JSON (RFC 8259)."""
    try:
        return json.dumps(obj, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    except ValueError:
        raise KtoolError("a result is not a finite number (NaN or infinite): not written")


def cmd_report(a):
    """The report through the library's own writers (ktime-render), once this tool has checked it
    as merge and diff do. FILE - is standard input."""
    load_report(a.file)
    if a.top is not None and a.top < 1:
        raise KtoolError("ktime report: --top %d: give at least 1" % a.top)
    args = ["--format", a.format, "--sort", a.sort]
    if a.top is not None:
        args += ["--top", str(a.top)]
    if a.filter is not None:
        args += ["--filter", a.filter]
    run_render("report", args + ["--", a.file], stdin=_stdin if a.file == "-" else None)
    return 0


def cmd_merge(a):
    """The reports merged by ktime-merge, the library's own merge, which checks them (one line
    on stderr for the first that cannot be read or merged; each empty report skipped said on a
    line of its own) and writes the merged report."""
    exe = find_merge("merge")
    args = [exe] + (["-o", a.output] if a.output else [])
    if a.rank_rows is not None:
        args += ["--rank-rows", str(a.rank_rows)]
    if a.world_size is not None:
        args += ["--world-size", str(a.world_size)]
    if a.comm is not None:
        args += ["--comm", a.comm]
    sys.stdout.flush()
    try:
        p = subprocess.run(args + ["--"] + a.files)
    except OSError as e:
        raise KtoolError("ktime merge: cannot run %s: %s" % (exe, e.strerror or e))
    if p.returncode == -signal.SIGPIPE:
        raise BrokenPipeError()
    return p.returncode if p.returncode >= 0 else 2


def load_for_diff(a):
    if a.alpha is not None and not (0 < a.alpha < 1):
        raise KtoolError("ktime diff: --alpha %g is not between 0 and 1" % a.alpha)
    base, new = load_report(a.base), load_report(a.new)
    return diff_reports(a.base, base, a.new, new, parse_threshold(a.threshold), a.alpha)


def cmd_diff(a):
    d = load_for_diff(a)
    write_out(dump_json(d) if a.format == "json" else render_diff_text(d))
    return 1 if d["regressions"] else 0


# ------------------------------------------------------------------ KTIME_SERIES

def iso_seconds(s):
    """An ISO 8601 time of the library's ("2026-11-25T08:14:24.163Z") in seconds since the
    epoch, or None."""
    import datetime
    if not isinstance(s, str):
        return None
    try:
        return datetime.datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def is_series(path):
    """Whether path's first line is a KTIME_SERIES line."""
    try:
        with open(path, "rb") as f:
            first = f.readline()
        return isinstance(json.loads(first), dict) and json.loads(first).get("ktime_series") == 1
    except (OSError, ValueError):
        return False


def load_series(path):
    """KTIME_SERIES's lines (docs/always-on.md), checked: a list of dicts. A last line cut short
    (the process was killed while writing it) is left out, said on stderr."""
    try:
        with open(path, "rb") as f:
            raw_lines = f.read().split(b"\n")
    except OSError as e:
        raise KtoolError("%s: %s" % (path, e.strerror or e))
    out = []
    for i, line in enumerate(raw_lines):
        if not line.strip():
            continue
        try:
            e = json.loads(line.decode("utf-8", "surrogateescape"))
        except ValueError:
            if i == len(raw_lines) - 1:
                sys.stderr.write("ktime: %s: its last line is cut short (the process was killed "
                                 "while writing it); left out\n" % path)
                continue
            raise KtoolError("%s: line %d is not JSON" % (path, i + 1))
        _need(isinstance(e, dict) and e.get("ktime_series") == 1, path, "line %d" % (i + 1),
              "is not a KTIME_SERIES line")
        _need(isinstance(e.get("kernels"), list), path, "line %d" % (i + 1), "has no kernels")
        for k in e["kernels"]:
            _need(isinstance(k, dict) and isinstance(k.get("mangled"), str) and is_num(k.get("sum_us"))
                  and isinstance(k.get("calls"), int) and isinstance(k.get("timed"), int),
                  path, "line %d" % (i + 1), "has a kernel without mangled, calls, timed, sum_us")
        out.append(e)
    if not out:
        raise KtoolError("%s: no KTIME_SERIES line" % path)
    return out


def series_table(lines, top):
    """The series as the plot shows it: the process (the first line's pid and host; others'
    lines are left out), each interval's end in seconds from the first line's start, and for
    the top kernels by GPU time (the rest summed as "other"): GPU time per second of the
    interval, p50 and p99. Returns (times, {name: [busy fraction...]}, {name: [p50...]},
    {name: [p99...]}, totals {mangled: {"calls", "timed", "sum_us"}}, intervals)."""
    pid, host = lines[0].get("pid"), lines[0].get("host")
    mine = [e for e in lines if e.get("pid") == pid and e.get("host") == host]
    t0 = iso_seconds(mine[0].get("from")) or iso_seconds(mine[0].get("at")) or 0.0
    totals, names = {}, {}
    for e in mine:
        if e.get("from_zero") and e is not mine[0]:
            totals = {}  # a reset: the counts start afresh
        for k in e["kernels"]:
            t = totals.setdefault(k["mangled"], {"calls": 0, "timed": 0, "sum_us": 0.0})
            t["calls"] += k["calls"]
            t["timed"] += k["timed"]
            t["sum_us"] += k["sum_us"]
            names[k["mangled"]] = k.get("name") or k["mangled"]
    ranked = sorted(totals, key=lambda m: -totals[m]["sum_us"])
    shown = ranked[:top]
    rest = ranked[top:]
    times, busy, p50, p99 = [], {}, {}, {}
    for e in mine:
        a, f = iso_seconds(e.get("at")), iso_seconds(e.get("from"))
        if a is None:
            continue
        span = a - f if f is not None and a > f else None
        times.append(a - t0)
        by = {k["mangled"]: k for k in e["kernels"]}
        for m in shown:
            k = by.get(m)
            busy.setdefault(names[m], []).append(k["sum_us"] / 1e6 / span if k and span else 0.0)
            p50.setdefault(names[m], []).append(k.get("p50_us") if k else None)
            p99.setdefault(names[m], []).append(k.get("p99_us") if k else None)
        if rest:
            us = sum(by[m]["sum_us"] for m in rest if m in by)
            busy.setdefault("(other kernels)", []).append(us / 1e6 / span if span else 0.0)
    return times, busy, p50, p99, totals, len(mine)


def plot_series(lines, plt, top):
    times, busy, p50, p99, _, n = series_table(lines, top)
    if not times:
        raise KtoolError("ktime plot: the series has no interval to plot")
    fig, (a1, a2) = plt.subplots(2, 1, sharex=True, figsize=(12, 7))
    for name, ys in busy.items():
        a1.plot(times, ys, marker="." if n < 50 else None, label=plot_labels([name])[0])
    a1.set_ylabel("GPU time per second")
    a1.set_title("each kernel's GPU time per second of each interval (KTIME_SERIES)")
    a1.legend(fontsize=7, loc="upper left")
    for name in p50:
        line = a2.plot(times, [v if v is not None else float("nan") for v in p50[name]],
                       label=plot_labels([name])[0])
        a2.plot(times, [v if v is not None else float("nan") for v in p99[name]], linestyle=":",
                color=line[0].get_color())
    a2.set_yscale("log")
    a2.set_ylabel("p50 (solid), p99 (dotted), us")
    a2.set_xlabel("seconds since the first snapshot's start")
    return fig


def save_figure(fig, output):
    """The picture to the file output, or a PNG to standard output when output is -."""
    if output == "-":
        fig.savefig(sys.stdout.buffer, format="png")
        sys.stdout.buffer.flush()
    else:
        fig.savefig(output)


def cmd_plot(a):
    if a.top < 1:
        raise KtoolError("ktime plot: --top %d: give at least 1" % a.top)
    ext = ".png" if a.output == "-" else os.path.splitext(a.output)[1].lower()
    if ext not in (".png", ".svg", ".pdf"):
        raise KtoolError("ktime plot: -o %s: the name must end in .png, .svg or .pdf (or be -, "
                         "a PNG on standard output)" % a.output)
    if a.new is None and is_series(a.file):
        lines = load_series(a.file)
        plt = need_matplotlib()
        try:
            fig = plot_series(lines, plt, a.top)
            fig.tight_layout()
            save_figure(fig, a.output)
        except OSError as e:
            raise KtoolError("ktime plot: cannot write %s: %s" % (a.output, e.strerror or e))
        if a.output != "-":
            sys.stderr.write("ktime plot: series plot written to %s\n" % a.output)
        return 0
    first = load_json(a.file)
    if a.new is not None:
        base = check_report(a.file, first)
        new = load_report(a.new)
        d = diff_reports(a.file, base, a.new, new, parse_threshold(a.threshold), 0.01)
        kind, obj = "diff", d
    elif isinstance(first, dict) and first.get("ktime_diff") == 1 and isinstance(first.get("kernels"), list):
        kind, obj = "diff", first
    else:
        obj = check_report(a.file, first)
        kind = "merged" if isinstance(obj.get("merged_from"), list) else "report"
    plt = need_matplotlib()
    try:
        fig = {"diff": plot_diff, "merged": plot_merged, "report": plot_report}[kind](obj, plt, a.top)
        fig.tight_layout()
        save_figure(fig, a.output)
    except (KeyError, TypeError) as e:
        raise KtoolError("ktime plot: %s: not a ktime %s this tool can plot (%s)" % (a.file, kind, e))
    except OSError as e:
        raise KtoolError("ktime plot: cannot write %s: %s" % (a.output, e.strerror or e))
    if a.output != "-":
        sys.stderr.write("ktime plot: %s plot written to %s\n" % (kind, a.output))
    return 0


# ------------------------------------------------------------------ self-test

def selftest():
    """Pure functions against known values; one 'ok - ...' / 'not ok - ...' line each."""
    import random
    results = []

    def check(desc, cond):
        results.append(bool(cond))
        print("%s - %s" % ("ok" if cond else "not ok", desc))

    near = lambda x, y, tol: abs(x - y) <= tol
    check("t CDF: t=2, df=10, two-sided p = 0.0734 (0.073388)",
          near(t_two_sided_p(2.0, 10), 0.0733880347, 1e-8))
    check("t CDF: t=1, df=1 (Cauchy), two-sided p = 0.5", near(t_two_sided_p(1.0, 1), 0.5, 1e-12))
    check("t CDF: t=2, df=2, p = 1 - 2/sqrt(6)",
          near(t_two_sided_p(2.0, 2), 1 - 2 / math.sqrt(6), 1e-12))
    check("t CDF: t=2.228139, df=10, p = 0.05", near(t_two_sided_p(2.2281388520, 10), 0.05, 1e-8))
    check("t CDF: t=1.959964, df=1e7 approaches the normal, p = 0.05",
          near(t_two_sided_p(1.959963985, 1e7), 0.05, 1e-6))
    check("t CDF: t=0 gives p = 1, and the CDF is 0.5", near(t_two_sided_p(0.0, 5), 1.0, 1e-15)
          and near(t_cdf(0.0, 5), 0.5, 1e-15))
    check("t CDF: symmetric, CDF(-t) = 1 - CDF(t)", near(t_cdf(-1.3, 7), 1 - t_cdf(1.3, 7), 1e-14))
    check("incomplete beta: I_0.5(2, 2) = 0.5, I_0.3(1, 1) = 0.3",
          near(betainc(2, 2, 0.5), 0.5, 1e-14) and near(betainc(1, 1, 0.3), 0.3, 1e-14))
    # Welch against a direct computation from raw samples.
    rnd = random.Random(12)
    xs = [rnd.gauss(100, 5) for _ in range(40)]
    ys = [rnd.gauss(103, 9) for _ in range(25)]

    def agg(v):
        m = sum(v) / len(v)
        return len(v), m, sum((x - m) ** 2 for x in v)
    n1, m1, q1 = agg(xs)
    n2, m2_, q2 = agg(ys)
    v1, v2 = q1 / (n1 - 1), q2 / (n2 - 1)
    t_direct = (m2_ - m1) / math.sqrt(v1 / n1 + v2 / n2)
    df_direct = (v1 / n1 + v2 / n2) ** 2 / ((v1 / n1) ** 2 / (n1 - 1) + (v2 / n2) ** 2 / (n2 - 1))
    t, df, p = welch(n1, m1, q1, n2, m2_, q2)
    check("Welch: t and df from (n, mean, M2) equal those from the raw samples",
          near(t, t_direct, 1e-12) and near(df, df_direct, 1e-9) and 0 < p < 1)
    check("Welch: no spread and equal means gives p 1; different means p 0",
          welch(10, 5.0, 0.0, 10, 5.0, 0.0)[2] == 1.0 and welch(10, 5.0, 0.0, 10, 6.0, 0.0)[2] == 0.0)
    try:
        dump_json({"x": float("nan")})
        refused = False
    except KtoolError:
        refused = True
    check("json: NaN is never written (an error instead)", refused)
    try:
        check_report("selftest", json.loads('{"schema_version": 2, "kernels": [], "totals": '
                                            '{"timed_total_ms": 0}, "devices": [], "warmup": 5, '
                                            '"timing_method": "cuda-events", "memops": [{"kind": '
                                            '"HtoD", "calls": 1, "bytes": 1, "timed_bytes": 0}]}'))
        said = ""
    except KtoolError as e:
        said = str(e)
    check("validation: a memory operation without 'timed' is named, not a KeyError",
          said == "selftest: not a ktime report: memops[0] has no 'timed'")
    print("1..%d" % len(results))
    return 0 if all(results) else 1


# ------------------------------------------------------------------ main

EXIT_STATUS = """exit status:
  0  done
  2  a usage or input error (one line on stderr saying which)"""


def para(text):
    """A description for --help, wrapped to 79 columns."""
    return textwrap.fill(text, 79)


def build_parser():
    raw = argparse.RawDescriptionHelpFormatter
    p = argparse.ArgumentParser(prog="ktime", formatter_class=raw,
                                description="offline tools on ktime's JSON reports")
    p.add_argument("--selftest", action="store_true", help="check the pure functions (TAP-like)")
    sub = p.add_subparsers(dest="cmd")
    r = sub.add_parser(
        "report", prog="ktime report", formatter_class=raw,
        help="print a saved JSON report as text, CSV or JSON",
        description=para("Prints a JSON report (ktime -o run.json) as the library would have printed "
                    "it: the same writers, byte for byte. --top, --sort and --filter show a "
                    "subset or another order of the same rows, and the text says so."),
        epilog=EXIT_STATUS)
    r.add_argument("file", metavar="FILE", help="the JSON report; - reads it from standard input")
    r.add_argument("--format", choices=("text", "csv", "json"), default="text",
                   help="the output's format (default: text)")
    r.add_argument("--top", type=int, metavar="N", help="only the N largest rows (default: all)")
    r.add_argument("--sort", choices=("total", "mean", "p99", "calls"), default="total",
                   help="the rows' order, largest first (default: total, the GPU time)")
    r.add_argument("--filter", metavar="REGEX",
                   help="only the kernels whose name matches this extended regular expression")
    m = sub.add_parser(
        "merge", prog="ktime merge", formatter_class=raw,
        help="merge the reports of ranks or runs into one, exactly",
        description=para("Merges the JSON reports of several processes (the ranks of a job, or "
                    "repeated runs) into one: counts, sums and histograms added, variances "
                    "combined exactly, so the result is the report of all the samples. Per "
                    "kernel it keeps each input's share (up to --rank-rows reports) and shows "
                    "the slowest and fastest rank and the imbalance; a merge of ranks ends with "
                    "their balance (each rank's compute and NCCL time, the ranks without a "
                    "report, and the verdict: straggler, imbalanced or balanced). Reports of "
                    "different warmup, timer or schema are refused; so is the same report given "
                    "twice. Empty reports (a process with no launch) are skipped. The merge is "
                    "ktime-merge, the library's own (the same code as the job report)."),
        epilog=EXIT_STATUS)
    m.add_argument("files", nargs="+", metavar="FILE", help="the JSON reports (- reads one from standard input)")
    m.add_argument("-o", "--output", metavar="OUT",
                   help="write the merged JSON report to OUT (default, or -: standard output)")
    m.add_argument("--rank-rows", type=int, metavar="N",
                   help="up to N reports, keep each kernel's part of each report and a row "
                        "per rank in the balance (default: 64); past it, the spread and the "
                        "verdict only")
    m.add_argument("--world-size", type=int, metavar="N",
                   help="the ranks the job has, to name those without a report (default: the "
                        "reports' own world_size)")
    m.add_argument("--comm", metavar="REGEX",
                   help="the collectives' kernels, where a rank that is ahead waits for the "
                        "others: an extended regular expression matched in any case against "
                        "each kernel's name (default: nccl)")
    d = sub.add_parser(
        "diff", prog="ktime diff", formatter_class=raw,
        help="compare two reports kernel by kernel (exit 1: a regression)",
        description=para("Compares each kernel's mean in NEW with BASE by Welch's t-test (from the "
                    "reports' counts, means and sums of squared deviations), and its median; "
                    "lists new and vanished kernels and the total. A regression: the mean up "
                    "by more than --threshold with p < --alpha, with at least 10 samples in "
                    "both reports."),
        epilog="""exit status:
  0  no kernel regressed significantly
  1  at least one kernel regressed significantly (for CI)
  2  a usage or input error (one line on stderr saying which)""")
    d.add_argument("base", metavar="BASE", help="the JSON report to compare against")
    d.add_argument("new", metavar="NEW", help="the JSON report of the change")
    d.add_argument("--threshold", default="5%", metavar="PCT",
                   help="the least change in mean that counts (default: 5%%)")
    d.add_argument("--alpha", type=float, default=0.01,
                   help="the test's significance level, between 0 and 1 (default: 0.01)")
    d.add_argument("--format", choices=("text", "json"), default="text",
                   help="the output's format (default: text)")
    pl = sub.add_parser(
        "plot", prog="ktime plot", formatter_class=raw,
        help="draw a report, a merged report, a diff, or a KTIME_SERIES file over time "
             "(needs matplotlib)",
        description=para("Draws FILE: a report (each kernel's share of the GPU time, and its p50 to "
                    "p99 with the mean), a merged report (a rank x kernel heat map of total "
                    "time), a diff (each kernel's change in mean), or a KTIME_SERIES file (each "
                    "kernel's GPU time per second of each interval and its p50/p99 over time); "
                    "FILE NEW draws their diff. Needs matplotlib in the Python that runs it."),
        epilog=EXIT_STATUS)
    pl.add_argument("file", metavar="FILE",
                    help="a JSON report, merged report or diff, or a KTIME_SERIES file")
    pl.add_argument("new", nargs="?", metavar="NEW", help="a second report: draw FILE -> NEW")
    pl.add_argument("-o", "--output", default="ktime-plot.png", metavar="OUT",
                    help="the picture: .png, .svg or .pdf; - is a PNG on standard output "
                         "(default: ktime-plot.png)")
    pl.add_argument("--top", type=int, default=15, metavar="N",
                    help="the N largest kernels (default: 15)")
    pl.add_argument("--threshold", default="5%", metavar="PCT",
                    help="with NEW: the change that counts as a regression (default: 5%%)")
    return p


def main(argv=None):
    p = build_parser()
    a = p.parse_args(argv)
    if a.selftest:
        return selftest()
    if not a.cmd:
        p.print_usage(sys.stderr)
        return 2
    cmd = {"report": cmd_report, "merge": cmd_merge, "diff": cmd_diff, "plot": cmd_plot}[a.cmd]
    try:
        return cmd(a)
    except RenderFailed as e:
        return e.args[0]
    except KtoolError as e:
        msg = str(e)
        if not msg.startswith("ktime "):
            msg = "ktime %s: %s" % (a.cmd, msg)
        sys.stderr.write(msg + "\n")
        return 2
    except BrokenPipeError:
        try:
            sys.stdout = None
        finally:
            return 0
    except Exception as e:  # never a traceback: one line, exit status 2
        sys.stderr.write("ktime %s: cannot process the input: %s: %s\n" % (a.cmd, type(e).__name__, e))
        return 2


if __name__ == "__main__":
    sys.exit(main())
