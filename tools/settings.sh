#!/bin/sh
# tools/settings.sh - the settings blocks of the documentation are what src/core/settings.def
# declares: tools/ktime-settings (built from it) writes each block, this script puts them in.
#
# usage: tools/settings.sh [--check | --update] [BUILD_DIR [SRC_DIR]]
#   --check (the default): compare every block between a line holding `settings: begin` and
#       one holding `settings: end` in the files below with what ktime-settings writes for
#       it; print a diff and exit 1 on any difference or a missing block.
#       tests/e2e/settings.sh runs it in `make check`.
#   --update: rewrite the blocks in place.
# The files: tools/ktime.in (the launcher's help and defaults), docs/usage.md (the table),
# docs/settings.md (the reference table), man/libktime.7 (an entry per setting), man/ktime.1
# (the list of names). BUILD_DIR is the top build folder (default: build/ beside this
# script's tools/), SRC_DIR the source tree (default: the one this script is in).
set -u
mode=check
case "${1:-}" in
--check) shift ;;
--update) mode=update; shift ;;
-h|--help) sed -n '2,17p' "$0"; exit 0 ;;
-*) echo "usage: tools/settings.sh [--check | --update] [BUILD_DIR [SRC_DIR]]" >&2; exit 2 ;;
esac
src=${2:-$(cd "$(dirname "$0")/.." && pwd)} || exit 2
build=${1:-$src/build}
gen=$build/tools/ktime-settings
[ -x "$gen" ] || { echo "settings: $gen is not built (make -C BUILD_DIR)" >&2; exit 2; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ktime-settings.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT

rc=0
for rel in tools/ktime.in docs/usage.md docs/settings.md man/libktime.7 man/ktime.1; do
    doc=$src/$rel
    if [ ! -f "$doc" ]; then
        echo "settings: no $rel" >&2
        rc=1
        continue
    fi
    "$gen" --block "${rel##*/}" >"$tmp/block" || { echo "settings: ktime-settings --block ${rel##*/} failed" >&2; exit 2; }
    # The file with its one block replaced: the marker lines stay, what is between them is
    # the generated block.
    awk -v block="$tmp/block" -v rel="$rel" '
        /settings: begin/ {
            if (seen++) { print "settings: " rel ": a second settings: begin" > "/dev/stderr"; bad = 1 }
            print
            while ((getline line < block) > 0) print line
            close(block)
            skip = 1
            next
        }
        /settings: end/ && skip { skip = 0; print; next }
        skip { next }
        { print }
        END {
            if (!seen) { print "settings: " rel ": no settings: begin line" > "/dev/stderr"; bad = 1 }
            if (skip) { print "settings: " rel ": no settings: end line" > "/dev/stderr"; bad = 1 }
            exit bad
        }' "$doc" >"$tmp/new" || { rc=1; continue; }
    if cmp -s "$doc" "$tmp/new"; then
        continue
    fi
    if [ "$mode" = update ]; then
        # cat into the file, not mv: its mode (ktime.in's) stays.
        cat "$tmp/new" >"$doc" && echo "settings: updated $rel"
    else
        echo "settings: $rel's settings block differs from src/core/settings.def (tools/settings.sh --update):"
        diff -u "$doc" "$tmp/new"
        rc=1
    fi
done
exit $rc
