#!/usr/bin/env bash
# tools/deps.sh - installs the Debian packages ktime needs to build and test, when run as
# root; otherwise prints the exact apt-get line and fails. The CUDA toolkit itself
# (/usr/local/cuda, or --with-cuda=DIR) is not a Debian package and is not installed here.
set -u
PKGS="autoconf automake libtool make gcc pkg-config uthash-dev libcmocka-dev libtsan2 python3"
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
    echo "ktime needs these packages; run as root:" >&2
    echo "  apt-get update && apt-get install -y$missing" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq && apt-get install -y -qq --no-install-recommends $missing >/dev/null
