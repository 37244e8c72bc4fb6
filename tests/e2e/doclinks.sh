#!/bin/sh
# doclinks.sh - the documentation's links hold where a user reads it: every relative link of
# README.md and docs/ in the source tree, and of the copy `make install` puts in
# share/doc/ktime, names a file that is there and, when it names a heading, a heading that is
# there (tests/e2e/doclinks.py). The checker itself fails on a broken file link and on a
# broken heading link. TAP.
. "$(dirname "$0")/lib.sh"

: "${BUILD_DIR:=$E2E_BIN/../..}"
: "${SRC_DIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
[ -f "$BUILD_DIR/Makefile" ] || e2e_fail_setup "no Makefile in $BUILD_DIR (set BUILD_DIR)"
if [ -z "${PYTHON:-}" ] && [ -x /usr/bin/python3 ]; then PYTHON=/usr/bin/python3; fi
PY=${PYTHON:-python3}
if ! command -v "$PY" >/dev/null 2>&1; then
    skip "the documentation's links" "no $PY"
    finish
fi
LINKS=$SRC_DIR/tests/e2e/doclinks.py
links() { "$PY" "$LINKS" "$1"; }

# The source tree's documents (README.md and docs/, without the rest of the tree).
mkdir -p "$tmp/src"
cp "$SRC_DIR/README.md" "$tmp/src/" && cp -R "$SRC_DIR/docs" "$tmp/src/docs" ||
    e2e_fail_setup "cannot copy the documents"
check "source tree: every relative link of README.md and docs/ resolves, headings too" links "$tmp/src"

# The checker: a link to a missing file, and to a missing heading, are found and named.
cp -R "$tmp/src" "$tmp/bad"
printf '\nSee [gone](nowhere.md) and [the method](docs/method.md#no-such-heading).\n' >>"$tmp/bad/README.md"
"$PY" "$LINKS" "$tmp/bad" >"$tmp/bad.out" 2>&1
echo $? >"$tmp/bad.rc"
check "the checker: a broken link fails it (status 1)" sh -c "[ \$(cat '$tmp/bad.rc') = 1 ]"
check "the checker: names a link to a missing file" grep -qx 'README.md: nowhere.md: no such file' "$tmp/bad.out"
check "the checker: names a link to a missing heading" \
    grep -qx 'README.md: docs/method.md#no-such-heading: no such heading' "$tmp/bad.out"

# The installed copy, as `make install` lays it out.
{
    echo 'ktime-e2e-docdir:'
    printf '\t@echo "%s"\n' "\$(docdir)"
} >"$tmp/dirs.mk"
docdir=$(env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL ${MAKE_PROG:-make} -s -C "$BUILD_DIR" -f Makefile \
    -f "$tmp/dirs.mk" ktime-e2e-docdir 2>"$tmp/dirs.err") ||
    e2e_fail_setup "cannot read the build's docdir: $(cat "$tmp/dirs.err")"
D=$tmp/dest
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL ${MAKE_PROG:-make} -C "$BUILD_DIR" install-data DESTDIR="$D" \
    >"$tmp/install.log" 2>&1 || e2e_fail_setup "make install-data failed: $(tail -n 20 "$tmp/install.log")"
check "installed: README.md and docs/ in share/doc/ktime" sh -c \
    "[ -f '$D$docdir/README.md' ] && [ -f '$D$docdir/docs/method.md' ]"
check "installed: the results and example reports the documents cite" sh -c \
    "[ -f '$D$docdir/docs/results/bench-timers.md' ] && [ -f '$D$docdir/docs/examples/report.txt' ]"
check "installed: every relative link of share/doc/ktime resolves, headings too" links "$D$docdir"
finish
