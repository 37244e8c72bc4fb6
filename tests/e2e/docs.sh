#!/bin/sh
# docs.sh - the documentation a user reads: README.md is short and has what a newcomer needs
# (the comparison with other tools, install, a first run, the report), names nothing outside
# the repository and no git command; the man pages describe every call of include/ktime.h
# and name the right documents; ktime.pc says what ktime.h holds. The links: doclinks.sh. TAP.
. "$(dirname "$0")/lib.sh"

: "${SRC_DIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
R=$SRC_DIR/README.md

check "README.md: at most 200 lines" sh -c "[ \$(wc -l <'$R') -le 200 ]"
for t in 'Nsight Systems' 'Nsight Compute' 'torch.profiler' 'Proton'; do
    check "README.md's comparison table has a row for $t" grep -q "^| $t |" "$R"
done
check "README.md's comparison table: what each needs, its cost measured here, accuracy, output" \
    grep -qx '| tool | what it needs | cost, measured here | a kernel'"'"'s time is | output |' "$R"
check "README.md: install by pip, from source, make install" sh -c \
    "grep -q '^pip install \\.' '$R' && grep -q 'autoreconf -fi && mkdir -p build' '$R' && grep -q 'make -C build install' '$R'"
check "README.md: how a program linked with -lktime finds libktime.so at run time" \
    grep -q -- '-Wl,-rpath,$(pkg-config --variable=libdir ktime)' "$R"
check "README.md: a way to try ktime without a GPU (tools/try.sh, which exists)" sh -c \
    "grep -q '^tools/try.sh' '$R' && [ -x '$SRC_DIR/tools/try.sh' ]"
check "README.md: the report explained, the full reference in docs/text-format.md" sh -c \
    "grep -q '^## Reading the report' '$R' && grep -q '(docs/text-format.md)' '$R'"
for d in "$R" "$SRC_DIR"/docs/*.md "$SRC_DIR"/docs/results/*.md; do
    n=${d#"$SRC_DIR"/}
    check "$n: no path outside the repository, no git show of a commit" sh -c \
        "! grep -nE '\\.\\./shared|seeds/|git show [0-9a-f]|\\(seed\\)' '$d'"
done
check "docs/method.md: warmup, the events' floor, the gate, the CUPTI timer, the conditions, L2, and its sources" sh -c \
    "for h in '## 2. Warmup' '## 3. The events' '## 4. The gate' '## 6. The conditions' '## 7. Cold or warm L2' '## Choosing a timer' '## Sources'; do
         grep -q \"^\$h\" '$SRC_DIR/docs/method.md' || { echo \"no \$h\"; exit 1; }
     done; [ \$(grep -c '^[0-9]*\\. .*' '$SRC_DIR/docs/method.md') -ge 8 ]"

# The man pages and ktime.pc against the header.
grep -oE '^[a-z].* \*?(ktime_[a-z_]+)\(' "$SRC_DIR/include/ktime.h" | grep -oE 'ktime_[a-z_]+\($' | tr -d '(' | sort -u >"$tmp/calls"
check "include/ktime.h declares its calls (at least 14)" sh -c "[ \$(wc -l <'$tmp/calls') -ge 14 ]"
check "libktime(7) describes every call of ktime.h" sh -c \
    "while read -r c; do grep -q \"\$c\" '$SRC_DIR/man/libktime.7' || { echo \"no \$c\"; exit 1; }; done <'$tmp/calls'"
check "ktime(1) names ktime.h's timers and ranges" sh -c \
    "grep -q 'ktime_range_push' '$SRC_DIR/man/ktime.1' && grep -q 'CPU and GPU timers' '$SRC_DIR/man/ktime.1'"
check "libktime(7) points to the text report's document, docs/text-format.md" \
    grep -q 'share/doc/ktime/docs/text\\-format.md' "$SRC_DIR/man/libktime.7"
check "ktime.pc's description says what ktime.h holds" sh -c \
    "grep -q '^Description: .*timers.*ranges' '$SRC_DIR/ktime.pc.in'"
finish
