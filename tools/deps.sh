#!/usr/bin/env bash
# tools/deps.sh - installs the Debian packages ktime needs to build and test, when run as
# root; otherwise prints the exact apt-get line and fails. The CUDA toolkit itself
# (/usr/local/cuda, or --with-cuda=DIR) is not a Debian package and is not installed here.
# clang and libclang-rt-dev (libFuzzer) are wanted, not needed: without them the fuzz
# targets run with their own random-input driver, built by gcc (tests/fuzz/README.md).
# libc6-dev holds libc.a, with which tests/e2e/launcher.sh builds a static program to refuse.
# python3-matplotlib is wanted for `ktime plot` (tests/e2e/ktool.sh skips its plots without it).
# python3-pip and python3-venv: tests/e2e/pip.sh builds the wheel (pip wheel .) and installs it
# into a fresh virtual environment; ktime's own build backend needs nothing more (no setuptools).
set -u
PKGS="autoconf automake libtool make gcc libc6-dev pkg-config uthash-dev libcmocka-dev libtsan2 libasan8 libubsan1 python3 python3-pip python3-venv"
WANTED="clang libclang-rt-dev python3-matplotlib"
missing="" wanted=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
for p in $WANTED; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || wanted="$wanted $p"
done
[ -z "$missing$wanted" ] && exit 0
if [ "$(id -u)" != 0 ]; then
    [ -z "$missing" ] && exit 0
    echo "ktime needs these packages; run as root:" >&2
    echo "  apt-get update && apt-get install -y$missing$wanted" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq || exit 1
if [ -n "$missing" ]; then
    apt-get install -y -qq --no-install-recommends $missing >/dev/null || exit 1
fi
if [ -n "$wanted" ] && ! apt-get install -y -qq --no-install-recommends $wanted >/dev/null; then
    echo "deps: could not install$wanted; without clang the fuzz targets use their own driver, without python3-matplotlib ktime plot is not tested" >&2
fi
exit 0
