#!/bin/sh
# pip.sh - `pip wheel .` with the distribution's Python (/usr/bin/python3), offline: a wheel
# for any Python 3 (py3-none-<platform>) holding libktime.so, the launcher as the console
# script `ktime`, its helper programs and ktime.h; installed into a fresh virtual environment,
# its `ktime` times a program on the fake driver, prints the report with the environment's
# Python, and gives pkg-config flags that build a program against ktime.h; installed with
# --user, it keeps working once that tree is moved. Builds ktime from the source tree (a
# minute or so): tools/test.sh runs it (make check TESTS=tests/e2e/pip.sh), make check does
# not. TAP.
. "$(dirname "$0")/lib.sh"
need_ktime

: "${SRC_DIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
A=$E2E_BIN/app_cudart
CC_=${E2E_CC:-cc}
PYSYS=/usr/bin/python3
[ -x "$PYSYS" ] || PYSYS=$(command -v python3 2>/dev/null)
if [ -z "$PYSYS" ] || ! "$PYSYS" -m pip --version >/dev/null 2>&1 || ! "$PYSYS" -c 'import ensurepip, venv' 2>/dev/null; then
    skip "pip wheel . and a virtual environment" "no python3 with pip and venv (Debian: python3-pip python3-venv)"
    finish
fi
VERSION=$(sed -n 's/^AC_INIT(\[ktime\], *\[\([^]]*\)\].*/\1/p' "$SRC_DIR/configure.ac")
# The toolkit the build tree was configured with, for the wheel's own configure.
CONF=$(sed -n "s/^CUDA_HOME = //p" "${BUILD_DIR:-$E2E_BIN/../..}/Makefile")
PIPENV="env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1 PIP_CONFIG_FILE=/dev/null"

# --- the wheel -------------------------------------------------------------------------------------
# shellcheck disable=SC2086
$PIPENV CONFIGURE_FLAGS="${CONF:+--with-cuda=$CONF}" "$PYSYS" -m pip wheel --no-deps -w "$tmp/dist" "$SRC_DIR" \
    >"$tmp/wheel.log" 2>&1
echo $? >"$tmp/wheel.rc"
check "pip wheel . with $PYSYS, offline: succeeds" sh -c \
    "[ \$(cat '$tmp/wheel.rc') = 0 ] || { tail -n 40 '$tmp/wheel.log'; exit 1; }"
W=$(ls "$tmp"/dist/*.whl 2>/dev/null | head -n 1)
PLAT=$("$PYSYS" -c 'import re, sysconfig; print(re.sub(r"[^A-Za-z0-9]", "_", sysconfig.get_platform()))')
check "the wheel is ktime-$VERSION-py3-none-$PLAT.whl: any Python 3, no ABI" \
    test "${W##*/}" = "ktime-$VERSION-py3-none-$PLAT.whl"
"$PYSYS" - "$W" >"$tmp/contents" 2>&1 <<'EOF'
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
for i in z.infolist():
    print("%o %s" % (i.external_attr >> 16 & 0o777, i.filename))
EOF
holds() { # MODE PATH: the wheel holds PATH with that mode
    grep -qx "$1 $2" "$tmp/contents" && return 0
    echo "no '$1 $2' in the wheel:"
    cat "$tmp/contents"
    return 1
}
check "the wheel: the launcher, executable" holds 755 ktime/_root/bin/ktime
check "the wheel: libktime.so" holds 755 ktime/_root/lib/libktime.so
check "the wheel: ktime.h" holds 644 ktime/_root/include/ktime.h
check "the wheel: ktime.pc" holds 644 ktime/_root/lib/pkgconfig/ktime.pc
check "the wheel: ktime-render and ktime-settings, executable" sh -c \
    "grep -qx '755 ktime/_root/libexec/ktime/ktime-render' '$tmp/contents' && grep -qx '755 ktime/_root/libexec/ktime/ktime-settings' '$tmp/contents'"
check "the wheel: the offline tools" holds 755 ktime/_root/share/ktime/ktime_tool.py
"$PYSYS" -c 'import sys, zipfile; sys.stdout.write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]).decode())' \
    "$W" "ktime-$VERSION.dist-info/entry_points.txt" >"$tmp/entry_points.txt" 2>&1
check "the wheel: the console script ktime = ktime:main" grep -qx 'ktime = ktime:main' "$tmp/entry_points.txt"
check "the wheel: no Python extension module (only libktime.so is a library)" sh -c \
    "[ \$(grep -c '\\.so\$' '$tmp/contents') = 1 ]"

# --- a fresh virtual environment ---------------------------------------------------------------
"$PYSYS" -m venv "$tmp/venv" >"$tmp/venv.log" 2>&1 &&
    $PIPENV "$tmp/venv/bin/python" -m pip install "$W" >>"$tmp/venv.log" 2>&1
echo $? >"$tmp/venv.rc"
check "pip install of the wheel into a fresh venv: succeeds, offline" sh -c \
    "[ \$(cat '$tmp/venv.rc') = 0 ] || { tail -n 30 '$tmp/venv.log'; exit 1; }"
V=$tmp/venv/bin/ktime
SITE=$("$tmp/venv/bin/python" -c 'import ktime, os; print(os.path.dirname(ktime.__file__))' 2>/dev/null)
run_k() { # NAME [VAR=VALUE...] PROGRAM ARGS: from $tmp, with the fake driver
    _n=$1
    shift
    (cd "$tmp" && $TIMEOUT env LD_LIBRARY_PATH="$LDP" "$@" >"$tmp/$_n.out" 2>"$tmp/$_n.err")
    echo $? >"$tmp/$_n.rc"
}
run_k ver "$V" --version
check "venv: ktime --version, the library inside the venv" sh -c \
    "[ \$(cat '$tmp/ver.rc') = 0 ] && head -n 1 '$tmp/ver.out' | grep -q '^ktime $VERSION' &&
     [ \"\$(sed -n 's/^library //p' '$tmp/ver.out')\" = \"\$(cd '$SITE/_root/lib' && pwd -P)/libktime.so\" ] || { cat '$tmp/ver.out' '$tmp/ver.err'; exit 1; }"
run_plain base "$A" k=250000:20
run_k run "$V" -o "$tmp/venv.json" "$A" k=250000:20
check "venv: ktime ./app: same stdout and exit status as without" same_run base run
check "venv: ktime ./app: 15 samples of exactly 250 us" exact "$tmp/venv.json" k 15 250
run_k cfg "$V" -w 3 --config
check "venv: ktime --config runs the wheel's ktime-settings" sh -c \
    "[ \$(cat '$tmp/cfg.rc') = 0 ] && grep -q '^KTIME_WARMUP=3  *(launcher option)\$' '$tmp/cfg.out' || { cat '$tmp/cfg.err'; exit 1; }"
# The report through the venv's own Python, even with a python3 on PATH that cannot run it.
mkdir "$tmp/badpy"
printf '#!/bin/sh\necho "not this python" >&2\nexit 99\n' >"$tmp/badpy/python3"
chmod +x "$tmp/badpy/python3"
run_k rep PATH="$tmp/badpy:$PATH" "$V" report "$tmp/venv.json"
check "venv: ktime report runs with the venv's Python (KTIME_PYTHON), through the wheel's ktime-render" sh -c \
    "[ \$(cat '$tmp/rep.rc') = 0 ] && grep -q '^launches 20 seen: 15 timed' '$tmp/rep.out' || { cat '$tmp/rep.err'; exit 1; }"
run_k pym "$tmp/venv/bin/python" -m ktime --version
check "venv: python -m ktime is the same launcher" cmp "$tmp/ver.out" "$tmp/pym.out"
PCP=$("$tmp/venv/bin/python" -c 'import ktime; print(ktime.PKG_CONFIG_PATH)')
if command -v pkg-config >/dev/null 2>&1; then
    flags=$(PKG_CONFIG_PATH=$PCP pkg-config --cflags --libs ktime)
    libdir=$(PKG_CONFIG_PATH=$PCP pkg-config --variable=libdir ktime)
    printf '#include <ktime.h>\n#include <stdio.h>\nint main(void) { printf("version %%s\\n", ktime_version()); return 0; }\n' >"$tmp/v.c"
    # shellcheck disable=SC2086
    if $CC_ -o "$tmp/v" "$tmp/v.c" $flags -Wl,-rpath,"$libdir" >"$tmp/cc.log" 2>&1; then
        run_k v env -u LD_LIBRARY_PATH "$tmp/v"
        check "venv: a program built with the wheel's ktime.pc (and -Wl,-rpath) runs and finds libktime.so" sh -c \
            "[ \$(cat '$tmp/v.rc') = 0 ] && grep -qx 'version $VERSION' '$tmp/v.out' || { cat '$tmp/v.err'; exit 1; }"
    else
        not_ok "venv: a program builds with the wheel's ktime.pc" "$tmp/cc.log"
    fi
else
    skip "venv: a program built with the wheel's ktime.pc" "no pkg-config"
fi

# --- --user, then the user tree moved -------------------------------------------------------------
$PIPENV PYTHONUSERBASE="$tmp/user" "$PYSYS" -m pip install --user --break-system-packages "$W" \
    >"$tmp/user.log" 2>&1
echo $? >"$tmp/user.rc"
check "pip install --user: succeeds" sh -c "[ \$(cat '$tmp/user.rc') = 0 ] || { tail -n 20 '$tmp/user.log'; exit 1; }"
run_k urun PYTHONUSERBASE="$tmp/user" "$tmp/user/bin/ktime" -o "$tmp/user.json" "$A" k=250000:20
check "--user: ktime ./app times the program" exact "$tmp/user.json" k 15 250
mv "$tmp/user" "$tmp/moved"
run_k mver PYTHONUSERBASE="$tmp/moved" "$tmp/moved/bin/ktime" --version
check "--user, the tree moved: --version names the moved library" sh -c \
    "sed -n 's/^library //p' '$tmp/mver.out' | grep -q '^$tmp/moved/.*/ktime/_root/lib/libktime.so\$' || { cat '$tmp/mver.out' '$tmp/mver.err'; exit 1; }"
run_k mrun PYTHONUSERBASE="$tmp/moved" "$tmp/moved/bin/ktime" -o "$tmp/moved.json" "$A" k=250000:20
check "--user, the tree moved: ktime ./app still times the program" exact "$tmp/moved.json" k 15 250
finish
