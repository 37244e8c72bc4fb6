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

# A name longer than the samples dump's buffer (64 KiB) reaches the dump whole.
H=$(awk 'BEGIN { s = "h"; while (length(s) < 70000) s = s s; print substr(s, 1, 70000) }')
run_ktime huge KTIME_OUTPUT="$tmp/huge.json" KTIME_DUMP_SAMPLES="$tmp/huge.dump" "$A" "$H=125000:7"
check "a 70000-byte name: one row, and in the dump whole on each of its 2 sample lines" \
    sh -c "[ \$('$JCHECK' '$tmp/huge.json' 'kernels|len') = 1 ] && [ \$('$JCHECK' '$tmp/huge.json' 'kernels[0].mangled' | wc -c) = 70001 ] &&
           awk -F '\t' 'NR > 1 && length(\$1) == 70000 && \$3 == \"125.0000\" { n++ } END { exit !(n == 2 && NR == 3) }' '$tmp/huge.dump'"

# --- control characters and spreadsheet formulas in names ----------------------------------
# Names with a newline (that would forge a report line), a tab, an escape sequence, a C1
# control, a backslash, and names that begin with = + - @ ' (spreadsheet formulas).
NL=$(printf 'nl\nnote     forged_line')
TB=$(printf 'tab\there')
ES=$(printf 'esc\033[31mred')
C1=$(printf 'c1\302\2332J')
BS='back\slash'
set -- "$NL=125000:6" "$TB=250000:7" "$ES=375000:8" "$C1=500000:9" "$BS=125000:10" \
    "=cmd|' /C calc'!A0=250000:11" "+plus=375000:12" "-minus=500000:13" "@at(1)=125000:14" \
    "'quote=250000:15"
printf '%s\n' "$NL" "$TB" "$ES" "$C1" "$BS" "=cmd|' /C calc'!A0" "+plus" "-minus" "@at(1)" "'quote" \
    >"$tmp/ctrl.names"
run_plain ctrl_b "$A" "$@"
run_ktime ctrl_t KTIME_OUTPUT="$tmp/ctrl.json" KTIME_ALSO_OUTPUT="$tmp/ctrl.txt" \
    KTIME_DUMP_SAMPLES="$tmp/ctrl.dump" "$A" "$@"
run_ktime ctrl_c KTIME_OUTPUT="$tmp/ctrl.csv" "$A" "$@"
check "control characters: same exit status and stdout as without ktime" same_run ctrl_b ctrl_t
check "control characters: nothing on stderr" sh -c "[ ! -s '$tmp/ctrl_t.err' ] && [ ! -s '$tmp/ctrl_c.err' ]"
PYSRC='
import json, re, sys
names = open(sys.argv[1], encoding="utf-8").read().split("\n")[:11]
names[0] += "\n" + names.pop(1)  # the name with a newline spans two lines of the list
names = names[:10]
r = json.load(open(sys.argv[2], encoding="utf-8"))
got = sorted(k["mangled"] for k in r["kernels"])
if got != sorted(names):
    print("the JSON names %r, want %r" % (got, sorted(names)))
    sys.exit(1)'
pyck "control characters: the JSON keeps each name as it is (10 rows)" "$tmp/ctrl.names" "$tmp/ctrl.json"
PYSRC='
import sys
t = open(sys.argv[1], "rb").read()
lines = t.split(b"\n")
head = lines.index(next(l for l in lines if l.startswith(b"  Time%")))
rows = lines[head + 1:lines.index(b"", head)]
bad = [c for c in (b"\x1b", b"\t", b"\r", b"\xc2\x9b") if c in t]
forged = [l for l in lines if l.startswith(b"note     forged")]
want = [b"nl\\nnote     forged_line", b"tab\\there", b"esc\\x1b[31mred", b"c1\\u009b2J",
        b"back\\\\slash", b"=cmd|\x27 /C calc\x27!A0", b"+plus", b"-minus", b"@at", b"\x27quote"]
missing = [w for w in want if not any(l.endswith(b"  " + w) or l.endswith(b"  " + w + b" (few samples)")
                                      for l in rows)]
if len(rows) != 10 or bad or forged or missing:
    print("%d table rows (want 10), raw %r, forged lines %r, rows not found %r" % (len(rows), bad,
          forged, missing))
    sys.exit(1)'
pyck "control characters: the text has one row per kernel, each name escaped, no forged line" "$tmp/ctrl.txt"
PYSRC='
import csv, io, re, sys
names = open(sys.argv[1], encoding="utf-8").read().split("\n")[:11]
names[0] += "\n" + names.pop(1)
names = names[:10]
raw = open(sys.argv[2], "rb").read()
def unescape(v):
    """docs/report-format.md: drop the one leading quote, then undo the escapes."""
    if v.startswith("\x27"):
        v = v[1:]
    return re.sub(r"\\(\\|n|r|t|x[0-9a-f]{2}|u00[89][0-9a-f])", lambda m: {"\\": "\\", "n": "\n",
                  "r": "\r", "t": "\t"}.get(m.group(1)) or chr(int(m.group(1)[1:], 16)), v)
rows = list(csv.DictReader(io.StringIO(raw.decode("utf-8"), newline="")))
bad = []
if raw.count(b"\n") != 11 or raw.count(b"\r\n") != 11:
    bad.append("%d lines, want 11, each ended by CRLF" % raw.count(b"\n"))
for row in rows:
    for f in ("name", "mangled"):
        v = row[f]
        if v[:1] in ("=", "+", "-", "@") or any(c in v for c in "\x1b\t\r\n\x9b"):
            bad.append("cell %r is raw" % v)
if sorted(unescape(row["name"]) for row in rows) != sorted(names):
    bad.append("read back %r, want %r" % (sorted(unescape(r["name"]) for r in rows), sorted(names)))
if [unescape(row["mangled"]) for row in rows] != [unescape(row["name"]) for row in rows]:
    bad.append("mangled cells differ from the names")
if bad:
    print("\n".join(bad))
    sys.exit(1)'
pyck "control characters: the CSV has one line per kernel, a csv reader gets each name back (less the documented quote and escapes)" \
    "$tmp/ctrl.names" "$tmp/ctrl.csv"
PYSRC='
import re, sys
names = open(sys.argv[1], encoding="utf-8").read().split("\n")[:11]
names[0] += "\n" + names.pop(1)
names = names[:10]
lines = open(sys.argv[2], "rb").read().decode("utf-8").split("\n")
assert lines[-1] == ""
samples = lines[1:-1]
def unescape(v):
    return re.sub(r"\\(\\|n|r|t|x[0-9a-f]{2}|u00[89][0-9a-f])", lambda m: {"\\": "\\", "n": "\n",
                  "r": "\r", "t": "\t"}.get(m.group(1)) or chr(int(m.group(1)[1:], 16)), v)
fields = [l.split("\t") for l in samples]
bad = [l for l in fields if len(l) != 3]
seen = sorted({unescape(f[0]) for f in fields})
if len(samples) != 55 or bad or seen != sorted(names):
    print("%d sample lines (want 55), %d not of 3 fields, names %r" % (len(samples), len(bad), seen))
    sys.exit(1)'
pyck "control characters: the samples dump has one line of 3 fields per sample (55), names escaped" \
    "$tmp/ctrl.names" "$tmp/ctrl.dump"

# --- a mangled name whose demangling explodes -------------------------------------------------
# 95 levels of Pair<X, X>, each second X a substitution of the first: 730 bytes that demangle
# to 2^94 Pairs (libstdc++'s demangler would build them all). The
# report names it by its mangled name at once; ordinary C++ names beside it demangle as c++filt
# prints them. A regression would meet lib.sh's time limit (and, outside AddressSanitizer,
# an address-space limit of 4 GB).
BOMB=$(awk 'BEGIN { d = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"; s = "_Z1fP4Pair"
    for (i = 0; i < 94; i++) s = s "IS_"; s = s "IiiE"
    for (i = 0; i < 94; i++) { id = ""; v = i; do { id = substr(d, v % 36 + 1, 1) id; v = int(v / 36) } while (v > 0); s = s "S" id "_E" }
    print s }')
THRUST=_ZN6thrust8cuda_cub4core13_kernel_agentINS0_14__parallel_for16ParallelForAgentINS0_20__uninitialized_fill7functorINS_10device_ptrIiEEiEEmEES9_mEEvT0_T1_
CUTLASS=_ZN7cutlass6KernelINS_4gemm6kernel13GemmUniversalINS1_9GemmShapeILi128ELi256ELi64EEENS_6half_tIfEENS_6layout8RowMajorELb1EEEEEvNT_6ParamsE
check "the crafted name is 730 bytes" test "${#BOMB}" -eq 730
run_plain bomb_b "$A" "$BOMB=125000:8" _Z6squarePfi=250000:7 "$THRUST=375000:6" "$CUTLASS=500000:6"
(
    [ "${E2E_SANITIZER:-}" = asan ] || ulimit -v 4000000 2>/dev/null
    run_ktime bomb_k KTIME_OUTPUT="$tmp/bomb.json" KTIME_ALSO_OUTPUT="$tmp/bomb.txt" \
        "$A" "$BOMB=125000:8" _Z6squarePfi=250000:7 "$THRUST=375000:6" "$CUTLASS=500000:6"
)
check "crafted name: same exit status and stdout as without ktime" same_run bomb_b bomb_k
check "crafted name: nothing on stderr" empty "$tmp/bomb_k.err"
check "crafted name: the report names it by its mangled name" \
    sh -c "[ \"\$('$JCHECK' '$tmp/bomb.json' 'kernels[mangled=$BOMB].name')\" = '$BOMB' ]"
check "crafted name: its 3 timed samples are in the report" exact "$tmp/bomb.json" "$BOMB" 3 125
check "crafted name: the text report has its row" grep -q '^  Time%' "$tmp/bomb.txt"
if command -v c++filt >/dev/null 2>&1; then
    for k in _Z6squarePfi "$THRUST" "$CUTLASS"; do
        check "crafted name: beside it, ${k%%I*}... demangles as c++filt prints it" \
            sh -c "[ \"\$('$JCHECK' '$tmp/bomb.json' 'kernels[mangled=$k].name')\" = \"\$(c++filt '$k')\" ]"
    done
else
    skip "crafted name: ordinary names beside it demangle as c++filt prints them" "no c++filt"
fi

finish
