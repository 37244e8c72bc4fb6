#!/bin/sh
# install.sh - `make install DESTDIR=...` from the build tree: what is installed and what is
# not (no .la), the installed launcher running a program against the installed library,
# ktime.pc and the public header compiling a program with pkg-config, the man pages, the
# installed tree moved elsewhere (relocation), `ktime --config` installed and moved, and
# `make uninstall`. TAP.
. "$(dirname "$0")/lib.sh"
need_ktime

: "${BUILD_DIR:=$E2E_BIN/../..}"
: "${SRC_DIR:=$(dirname "$0")/../..}"
[ -f "$BUILD_DIR/Makefile" ] || e2e_fail_setup "no Makefile in $BUILD_DIR (set BUILD_DIR)"
A=$E2E_BIN/app_cudart
CC_=${E2E_CC:-cc}

# As launcher.sh: programs with the installed (perhaps sanitized) library get libasan first.
KENV=
if [ -n "${E2E_PRELOAD_FIRST:-}" ]; then
    KENV="LD_PRELOAD=$E2E_PRELOAD_FIRST"
    [ "${E2E_SANITIZER:-}" = asan ] && KENV="$KENV ASAN_OPTIONS=$ASAN_OPTIONS:detect_leaks=0"
fi
run_k() {
    _n=$1
    shift
    # shellcheck disable=SC2086
    $TIMEOUT env LD_LIBRARY_PATH="$LDP" $KENV "$@" >"$tmp/$_n.out" 2>"$tmp/$_n.err"
    echo $? >"$tmp/$_n.rc"
}
status_is() { # NAME CODE
    [ "$(cat "$tmp/$1.rc")" = "$2" ] && return 0
    echo "status $(cat "$tmp/$1.rc"), want $2"
    cat "$tmp/$1.err"
    return 1
}

# make in the build tree, as a user would run it (not as a part of this make check).
bmake() {
    env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MAKEOVERRIDES ${MAKE_PROG:-make} -C "$BUILD_DIR" "$@"
}

# The folders the build tree was configured with.
{
    echo 'ktime-e2e-dirs:'
    printf '\t@echo "%s"\n' "prefix='\$(prefix)' bindir='\$(bindir)' libdir='\$(libdir)' includedir='\$(includedir)' mandir='\$(mandir)' docdir='\$(docdir)' pkgdatadir='\$(pkgdatadir)' pkglibexecdir='\$(pkglibexecdir)' VERSION='\$(VERSION)'"
} >"$tmp/dirs.mk"
dirs=$(bmake -s -f Makefile -f "$tmp/dirs.mk" ktime-e2e-dirs 2>"$tmp/dirs.err") ||
    e2e_fail_setup "cannot read the build's folders: $(cat "$tmp/dirs.err")"
eval "$dirs"
[ -n "$prefix" ] && [ -n "$libdir" ] && [ -n "$VERSION" ] || e2e_fail_setup "no folders from the Makefile: $dirs"

D=$tmp/dest
bmake install DESTDIR="$D" >"$tmp/install.log" 2>&1
echo $? >"$tmp/install.rc"
check "make install DESTDIR=... succeeds" sh -c "[ \$(cat '$tmp/install.rc') = 0 ] || { tail -n 30 '$tmp/install.log'; exit 1; }"

check "installed: the launcher, executable" test -x "$D$bindir/ktime"
check "installed: libktime.so" test -f "$D$libdir/libktime.so"
check "not installed: libktime.la, or any libtool archive" sh -c "[ -z \"\$(find '$D' -name '*.la')\" ]"
check "installed: the public header ktime.h" cmp "$SRC_DIR/include/ktime.h" "$D$includedir/ktime.h"
check "installed: ktime.pc" test -f "$D$libdir/pkgconfig/ktime.pc"
check "installed: the man pages ktime(1) and libktime(7)" \
    sh -c "[ -f '$D$mandir/man1/ktime.1' ] && [ -f '$D$mandir/man7/libktime.7' ]"
check "installed: README.md and docs/*.md under docdir" sh -c \
    "[ -f '$D$docdir/README.md' ] && for f in '$SRC_DIR'/docs/*.md; do [ -f \"$D$docdir/docs/\${f##*/}\" ] || exit 1; done"
if [ -f "$SRC_DIR/tools/ktime_tool.py" ]; then
    check "installed: the offline tools' ktime_tool.py" cmp "$SRC_DIR/tools/ktime_tool.py" "$D$pkgdatadir/ktime_tool.py"
else
    check "no tools/ktime_tool.py in the source tree: none installed" test ! -e "$D$pkgdatadir/ktime_tool.py"
fi
check "installed: ktime-render, executable, in pkglibexecdir" test -x "$D$pkglibexecdir/ktime-render"
check "installed: ktime-ctl, executable, in pkglibexecdir" test -x "$D$pkglibexecdir/ktime-ctl"
check "the build tree's own paths are not in the installed launcher" sh -c "! grep -qF '$BUILD_DIR' '$D$bindir/ktime' && ! grep -q '/src/\\.libs' '$D$bindir/ktime'"

# --- the installed launcher runs a program against the installed library ---------------------
BUILD_ID=$(sed -n 's/^#define KTIME_BUILD_ID "\(.*\)"$/\1/p' "$BUILD_DIR/build_id.h")
run_k ver "$D$bindir/ktime" --version
check "installed ktime --version: 'ktime $VERSION${BUILD_ID:+ (git $BUILD_ID)}'" sh -c \
    "[ \"\$(head -n 1 '$tmp/ver.out')\" = 'ktime $VERSION${BUILD_ID:+ (git $BUILD_ID)}' ]"
check "installed ktime --version: the installed library" \
    sh -c "l=\$(sed -n 's/^library //p' '$tmp/ver.out'); [ \"\$l\" = \"\$(cd '$D$libdir' && pwd -P)/libktime.so\" ]"
run_plain base "$A" k=250000:20
run_k run "$D$bindir/ktime" -o "$tmp/inst.json" "$A" k=250000:20
check "installed ktime ./app: same stdout and status as without" same_run base run
check "installed ktime ./app: the report, 15 samples of exactly 250 us" exact "$tmp/inst.json" k 15 250
run_k cfg "$D$bindir/ktime" -w 3 --config
check "installed ktime --config: the settings in force, through the installed ktime-settings" sh -c \
    "[ \$(cat '$tmp/cfg.rc') = 0 ] && grep -q '^KTIME_WARMUP=3  *(launcher option)\$' '$tmp/cfg.out' || { cat '$tmp/cfg.err'; exit 1; }"
if [ -f "$SRC_DIR/tools/ktime_tool.py" ] && command -v python3 >/dev/null 2>&1; then
    run_k irep "$D$bindir/ktime" report "$tmp/inst.json"
    check "installed ktime report: the installed ktime-render prints the report" sh -c \
        "[ \$(cat '$tmp/irep.rc') = 0 ] && grep -q '^ktime $VERSION' '$tmp/irep.out' && grep -q '  k\$' '$tmp/irep.out' || { cat '$tmp/irep.err'; exit 1; }"
fi
if [ ! -f "$SRC_DIR/tools/ktime_tool.py" ]; then
    run_k tool "$D$bindir/ktime" report x.json
    check "installed ktime report, no tools installed: 127, naming where it looked" sh -c \
        "[ \$(cat '$tmp/tool.rc') = 127 ] && grep -qF 'ktime: the offline tools are not installed (no $D$pkgdatadir/ktime_tool.py' '$tmp/tool.err'"
fi

# --- pkg-config and the public header ----------------------------------------------------------
if command -v pkg-config >/dev/null 2>&1; then
    PC="env PKG_CONFIG_PATH=$D$libdir/pkgconfig PKG_CONFIG_LIBDIR=$D$libdir/pkgconfig PKG_CONFIG_SYSROOT_DIR=$D pkg-config"
    check "pkg-config --modversion ktime: $VERSION" sh -c "[ \"\$($PC --modversion ktime)\" = '$VERSION' ]"
    flags=$($PC --cflags --libs ktime 2>"$tmp/pc.err")
    # has_flags FLAGS INCLUDEDIR LIBDIR: FLAGS are -I and -L of those folders (however the
    # path is spelled: ktime.pc names them relative to its own folder) and -lktime.
    has_flags() {
        _i='' _l='' _k=no
        for _f in $1; do
            case $_f in -I*) _i=${_f#-I} ;; -L*) _l=${_f#-L} ;; -lktime) _k=yes ;; esac
        done
        [ -n "$_i" ] && [ "$_i" -ef "$2" ] && [ -n "$_l" ] && [ "$_l" -ef "$3" ] && [ $_k = yes ] && return 0
        echo "want -I$2 -L$3 -lktime; got: $1"
        return 1
    }
    check "pkg-config --cflags --libs ktime: the installed include and lib folders, -lktime" \
        has_flags "$flags" "$D$includedir" "$D$libdir"
    check "ktime.pc: the prefix relative to its own folder (\${pcfiledir}), libdir and includedir under it" sh -c \
        "grep -qx 'prefix=\${pcfiledir}/[./]*' '$D$libdir/pkgconfig/ktime.pc' || case '$libdir' in '$prefix'/*) cat '$D$libdir/pkgconfig/ktime.pc'; exit 1 ;; esac"
    printf '#include <ktime.h>\n#include <stdio.h>\nint main(void) { printf("version %%s\\n", ktime_version()); return 0; }\n' >"$tmp/v.c"
    # shellcheck disable=SC2086
    if $CC_ -o "$tmp/v" "$tmp/v.c" $flags >"$tmp/cc.log" 2>&1; then
        ok "a C program compiles against the installed ktime.h and links with -lktime"
        run_k v LD_LIBRARY_PATH="$D$libdir" "$tmp/v"
        check "... and ktime_version() says $VERSION" sh -c "[ \$(cat '$tmp/v.rc') = 0 ] && grep -qx 'version $VERSION' '$tmp/v.out'"
    else
        not_ok "a C program compiles against the installed ktime.h and links with -lktime" "$tmp/cc.log"
    fi
else
    skip "pkg-config --cflags --libs ktime" "no pkg-config (Debian: pkg-config)"
fi

# --- the man pages -------------------------------------------------------------------------------
for page in man1/ktime.1 man7/libktime.7; do
    if command -v man >/dev/null 2>&1 && command -v nroff >/dev/null 2>&1; then
        MANWIDTH=80 LC_ALL=C man --warnings -l "$D$mandir/$page" >"$tmp/man.out" 2>"$tmp/man.err"
        check "man -l $page: formats with no warning, NAME and SYNOPSIS" sh -c \
            "[ ! -s '$tmp/man.err' ] && grep -q '^NAME' '$tmp/man.out' && grep -q '^SYNOPSIS' '$tmp/man.out' || { cat '$tmp/man.err'; exit 1; }"
    else
        check "$page is installed (no man or nroff here to format it)" test -s "$D$mandir/$page"
    fi
done

# --- relocation: the installed tree moved elsewhere keeps working ------------------------------
case $bindir:$libdir in
"$prefix"/*:"$prefix"/*)
    M=$tmp/moved
    mv "$D$prefix" "$M"
    mbin=$M${bindir#"$prefix"}
    mlib=$M${libdir#"$prefix"}
    run_k mver "$mbin/ktime" --version
    check "moved tree: ktime --version names the moved library" sh -c \
        "l=\$(sed -n 's/^library //p' '$tmp/mver.out'); [ \"\$l\" = \"\$(cd '$mlib' && pwd -P)/libktime.so\" ]"
    run_k mrun "$mbin/ktime" -o "$tmp/moved.json" "$A" k=250000:20
    check "moved tree: ktime ./app times the program" sh -c \
        "[ \$(cat '$tmp/mrun.rc') = 0 ] && '$JCHECK' '$tmp/moved.json' 'kernels[mangled=k].timed' == 15"
    mkdir "$tmp/links"
    ln -s "$mbin/ktime" "$tmp/links/ktime"
    run_k mlink "$tmp/links/ktime" -o "$tmp/mlink.json" "$A" k=250000:20
    check "moved tree, through a symlink to its launcher: the program is timed" sh -c \
        "[ \$(cat '$tmp/mlink.rc') = 0 ] && '$JCHECK' '$tmp/mlink.json' 'kernels[mangled=k].timed' == 15"
    run_k mctl "$tmp/links/ktime" ctl 999999999 status
    check "moved tree, through a symlink: ktime ctl runs the moved ktime-ctl" sh -c \
        "[ \$(cat '$tmp/mctl.rc') = 1 ] && grep -qx 'ktime ctl: no process 999999999' '$tmp/mctl.err'"
    if command -v pkg-config >/dev/null 2>&1; then
        # ktime.pc moved with the tree: a program built with its flags, and with the run-time
        # path README gives (-Wl,-rpath,LIBDIR), finds libktime.so with no LD_LIBRARY_PATH.
        MPC="env PKG_CONFIG_PATH=$mlib/pkgconfig PKG_CONFIG_LIBDIR=$mlib/pkgconfig pkg-config"
        mflags=$($MPC --cflags --libs ktime 2>"$tmp/mpc.err")
        check "moved tree: pkg-config --cflags --libs ktime names the moved folders" \
            has_flags "$mflags" "$M${includedir#"$prefix"}" "$mlib"
        mlibdir=$($MPC --variable=libdir ktime)
        # shellcheck disable=SC2086
        if [ -f "$tmp/v.c" ] && $CC_ -o "$tmp/mv" "$tmp/v.c" $mflags -Wl,-rpath,"$mlibdir" >"$tmp/mcc.log" 2>&1; then
            run_k mv env -u LD_LIBRARY_PATH "$tmp/mv"
            check "moved tree: a program linked with -lktime and -Wl,-rpath,\$(pkg-config --variable=libdir ktime) runs" \
                sh -c "[ \$(cat '$tmp/mv.rc') = 0 ] && grep -qx 'version $VERSION' '$tmp/mv.out' || { cat '$tmp/mv.err'; exit 1; }"
        else
            not_ok "moved tree: a program builds with the moved ktime.pc's flags" "$tmp/mcc.log"
        fi
    fi
    run_k mcfg "$tmp/links/ktime" --config
    check "moved tree, through a symlink: ktime --config runs the moved ktime-settings" sh -c \
        "[ \$(cat '$tmp/mcfg.rc') = 0 ] && grep -q '^KTIME_NVTX=1  *(launcher default)\$' '$tmp/mcfg.out' || { cat '$tmp/mcfg.err'; exit 1; }"
    if [ -f "$SRC_DIR/tools/ktime_tool.py" ] && command -v python3 >/dev/null 2>&1; then
        run_k mtool "$mbin/ktime" report --help
        check "moved tree: ktime report --help runs the moved ktime_tool.py" status_is mtool 0
        run_k mrep "$mbin/ktime" report "$tmp/inst.json"
        check "moved tree: ktime report prints through the moved ktime-render" sh -c \
            "[ \$(cat '$tmp/mrep.rc') = 0 ] && cmp -s '$tmp/irep.out' '$tmp/mrep.out' || { cat '$tmp/mrep.err'; exit 1; }"
        run_k mpy python3 "$M${pkgdatadir#"$prefix"}/ktime_tool.py" report "$tmp/inst.json"
        check "moved tree: its ktime_tool.py run by hand finds ktime-render (../../libexec/ktime)" sh -c \
            "[ \$(cat '$tmp/mpy.rc') = 0 ] && cmp -s '$tmp/irep.out' '$tmp/mpy.out' || { cat '$tmp/mpy.err'; exit 1; }"
    fi
    mv "$M" "$D$prefix"
    ;;
*) skip "the installed tree moved elsewhere" "bindir $bindir or libdir $libdir is not under prefix $prefix" ;;
esac

# --- make uninstall removes everything make install put there ----------------------------------
bmake uninstall DESTDIR="$D" >"$tmp/uninstall.log" 2>&1
echo $? >"$tmp/uninstall.rc"
check "make uninstall DESTDIR=... succeeds" sh -c "[ \$(cat '$tmp/uninstall.rc') = 0 ] || { tail -n 30 '$tmp/uninstall.log'; exit 1; }"
check "... and leaves no file behind" sh -c "f=\$(find '$D' ! -type d); [ -z \"\$f\" ] || { echo \"\$f\"; exit 1; }"
finish
