#!/bin/sh
# names.sh - kernel names a program may give, however long or strange: a name of any length is
# its own row (only its display is shortened, between UTF-8 characters); control characters
# are escaped in the text report, in the CSV (where a cell that would read as a spreadsheet
# formula is neutralised) and in the samples dump; a crafted mangled name whose demangling
# would explode is shown mangled, at once. Every run is compared with the same run without
# ktime. TAP.
. "$(dirname "$0")/lib.sh"
need_ktime

A=$E2E_BIN/app_cudart
if [ -z "${PYTHON:-}" ] && [ -x /usr/bin/python3 ]; then PYTHON=/usr/bin/python3; fi
PY=${PYTHON:-python3}
if ! command -v "$PY" >/dev/null 2>&1; then
    skip "names" "no $PY to read the reports with"
    finish
fi

# pyck DESC SCRIPT ARGS...: a check made by a Python script (stdin), given ARGS; it prints what
# is wrong and exits 1.
pyck() {
    _d=$1
    shift
    printf '%s\n' "$PYSRC" >"$tmp/.py"
    check "$_d" "$PY" "$tmp/.py" "$@"
}

# --- names longer than any buffer -----------------------------------------------------------
# Three kernels whose names share a 5000-byte prefix, and one whose 4095th byte is the middle
# of a two-byte UTF-8 character.
P=$(awk 'BEGIN { s = "k_"; while (length(s) < 5000) s = s "long_prefix_"; print substr(s, 1, 5000) }')
U=$(awk 'BEGIN { s = ""; while (length(s) < 4094) s = s "u"; printf "%s\303\251_tail", s }')
printf '%s' "$P" >"$tmp/P"
printf '%s' "$U" >"$tmp/U"
run_plain long_b "$A" "${P}a=125000:7" "${P}b=250000:9" "${P}c=375000:11" "$U=500000:6"
run_ktime long_k KTIME_OUTPUT="$tmp/long.json" KTIME_ALSO_OUTPUT="$tmp/long.txt" \
    "$A" "${P}a=125000:7" "${P}b=250000:9" "${P}c=375000:11" "$U=500000:6"
check "long names: same exit status and stdout as without ktime" same_run long_b long_k
check "long names: nothing on stderr" empty "$tmp/long_k.err"
PYSRC='
import json, sys
r = json.load(open(sys.argv[1], encoding="utf-8"))
p, u = (open(f, encoding="utf-8").read() for f in sys.argv[2:4])
want = {p + "a": (7, 2, 125.0), p + "b": (9, 4, 250.0), p + "c": (11, 6, 375.0), u: (6, 1, 500.0)}
got = {k["mangled"]: k for k in r["kernels"]}
bad = 0
if len(r["kernels"]) != 4:
    print("%d rows, want 4: %s" % (len(r["kernels"]), [len(k["mangled"]) for k in r["kernels"]]))
    bad = 1
for name, (calls, timed, us) in want.items():
    k = got.get(name)
    if k is None:
        print("no row named the %d-byte name ending %r" % (len(name.encode()), name[-12:]))
        bad = 1
    elif (k["calls"], k["timed"], k["mean_us"], k["name"]) != (calls, timed, us, name) or "name_bytes" in k:
        print("row ending %r: calls %s timed %s mean %s, want %s %s %s" % (name[-8:], k["calls"],
              k["timed"], k["mean_us"], calls, timed, us))
        bad = 1
sys.exit(bad)'
pyck "long names: 4 rows, each keyed by its whole name (5001 and 4101 bytes), calls and samples exact" \
    "$tmp/long.json" "$tmp/P" "$tmp/U"
PYSRC='
import sys
t = open(sys.argv[1], "rb").read()
try:
    t.decode("utf-8")
except UnicodeDecodeError as e:
    print("the text report is not UTF-8 at byte %d: %r" % (e.start, t[e.start - 8:e.start + 8]))
    sys.exit(1)
lines = t.split(b"\n")
rows = [l for l in lines if b"  k_long_prefix_long_prefix_long_prefix_long_pr...efix_long_prefix_long_p" in l
        or b"  uuuuuuuu" in l and b"...uuu" in l and "\u00e9_tail [".encode() in l]
full = [l for l in lines if l.startswith(b"[") and len(l) > 4000]
if len(rows) != 4 or len(full) != 4:
    print("%d shortened rows, %d full names, want 4 and 4" % (len(rows), len(full)))
    sys.exit(1)'
pyck "long names: the text shows each shortened (Full names lists them whole), all UTF-8" "$tmp/long.txt"

finish
