#!/usr/bin/env python3
"""ktool_malformed.py - tools/ktime_tool.py (and ktime-render, through which `ktime report`
prints) on broken reports: for each report given, every field at every depth (kernels and
their per_device, hw, histogram, shapes and other_shapes; memops; regions and their ranges and
kernels; totals; a merged report's merged_from, ranks and rank_spread) is in turn taken out,
made a string, null, an object for a list (and a list for an object), a number NaN, 1e308 or
-1, and `ktime report` runs on the result, and in turn `report --format csv`, `merge` (with
the intact report) or `diff --format json` (against it). Each either works (a field the
command does not need), or fails with exit status 2 and one line that names a file and says
what is wrong: never a traceback, never the catch-all "cannot process the input", and no
output ever holds NaN or Infinity.

    ktool_malformed.py TOOL REPORT.json...

Prints one "ok - ..." or "not ok - ..." line per report (tests/e2e/lib.sh selftest_lines), and
under a failure the first cases that went wrong.
"""

import contextlib
import copy
import importlib.util
import io
import json
import math
import os
import re
import sys
import tempfile


def load_tool(path):
    spec = importlib.util.spec_from_file_location("ktime_tool", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def paths(obj, at=()):
    """Every place in obj: (path, value), parents before children."""
    yield at, obj
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from paths(v, at + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj[:1]):  # the first of a list stands for the rest
            yield from paths(v, at + (i,))


def changed(doc, path, how):
    d = copy.deepcopy(doc)
    parent = d
    for p in path[:-1]:
        parent = parent[p]
    key = path[-1]
    if how == "delete":
        del parent[key]
    else:
        parent[key] = {"string": "x", "null": None, "list": [], "object": {},
                       "nan": float("nan"), "huge": 1e308, "negative": -1}[how]
    return d


def run(tool, argv):
    """tool.main(argv) in this process: its status, and what it and the programs it runs
    (ktime-render prints `ktime report`'s output) wrote to stdout and stderr."""
    out, err = io.BytesIO(), io.StringIO()

    class Std:
        buffer = out

        @staticmethod
        def write(s):
            out.write(s.encode("utf-8", "surrogateescape"))

        @staticmethod
        def flush():
            pass

    with tempfile.TemporaryFile() as fd_out, tempfile.TemporaryFile() as fd_err:
        sys.stderr.flush()
        saved_fds = os.dup(1), os.dup(2)
        os.dup2(fd_out.fileno(), 1)
        os.dup2(fd_err.fileno(), 2)
        try:
            with contextlib.redirect_stderr(err):
                saved, sys.stdout = sys.stdout, Std
                try:
                    rc = tool.main(argv)
                except SystemExit as e:
                    rc = e.code
                finally:
                    sys.stdout = saved
        finally:
            os.dup2(saved_fds[0], 1)
            os.dup2(saved_fds[1], 2)
            os.close(saved_fds[0])
            os.close(saved_fds[1])
        fd_out.seek(0)
        fd_err.seek(0)
        return (rc, out.getvalue() + fd_out.read(),
                err.getvalue() + fd_err.read().decode("utf-8", "replace"))


def judge(rc, out, err, files, written=None):
    """What is wrong with one run, or None."""
    if rc not in (0, 1, 2):
        return "exit status %r" % rc
    if rc == 2:
        lines = err.splitlines()
        if len(lines) != 1:
            return "%d lines on stderr: %r" % (len(lines), err[:300])
        if "cannot process the input" in err or "Traceback" in err:
            return "not a clear message: %s" % err.strip()
        if not any(os.path.basename(f) in err for f in files):
            return "the message does not name the file: %s" % err.strip()
        if out:
            return "output beside the error"
        return None
    data = out
    if written and os.path.exists(written):
        with open(written, "rb") as f:
            data += f.read()
    m = re.search(rb"(?<![A-Za-z_])(NaN|Infinity|nan|inf)(?![A-Za-z_])", data)
    if m:
        return "output holds %s" % m.group(1).decode()
    if err:
        return "exit status %d with stderr %r" % (rc, err[:200])
    return None


def main():
    tool = load_tool(sys.argv[1])
    parser = tool.build_parser()  # made once: it costs as much as a run
    tool.build_parser = lambda: parser
    for good in sys.argv[2:]:
        with open(good, encoding="utf-8") as f:
            doc = json.load(f)
        bad, cases = [], 0
        with tempfile.TemporaryDirectory() as tmp:
            broken = os.path.join(tmp, "broken.json")
            merged = os.path.join(tmp, "merged.json")
            for path, value in list(paths(doc)):
                if not path:
                    continue
                hows = ["delete", "string", "null"]
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    hows += ["nan", "huge", "negative"]
                elif isinstance(value, (dict, list)):
                    hows += ["list" if isinstance(value, dict) else "object"]
                for how in hows:
                    d = changed(doc, path, how)
                    with open(broken, "w", encoding="utf-8") as f:
                        json.dump(d, f)  # NaN and Infinity as Python writes them
                    # The text report every time; the CSV, merge and diff in turn.
                    other = ([["report", "--format", "csv", broken],
                              ["merge", broken, good, "-o", merged],
                              ["diff", broken, good, "--format", "json"]])[cases % 3]
                    for argv in (["report", broken], other):
                        if os.path.exists(merged):
                            os.unlink(merged)
                        cases += 1
                        rc, out, err = run(tool, argv)
                        why = judge(rc, out, err, (broken, good), merged if argv[0] == "merge" else None)
                        if why:
                            bad.append("%s %s (%s): %s" % (argv[0], "/".join(map(str, path)), how, why))
        name = os.path.basename(good)
        if bad:
            print("not ok - %s: %d of %d runs on broken copies went wrong" % (name, len(bad), cases))
            for b in bad[:25]:
                print("#   " + b)
        else:
            print("ok - %s: %d runs on broken copies, each done or one clear line" % (name, cases))
    return 0


if __name__ == "__main__":
    sys.exit(main())
