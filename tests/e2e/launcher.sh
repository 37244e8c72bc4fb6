#!/bin/sh
# launcher.sh - the build tree's `ktime` launcher (tools/ktime, from tools/ktime.in): its
# options, --version, --help against every KTIME_* variable the library reads, the refusal of
# a static executable, 126/127, absolute paths for a program that changes folders, the
# library found beside the launcher (through symlinks), and the subcommands' dispatch. TAP.
. "$(dirname "$0")/lib.sh"
need_ktime

: "${BUILD_DIR:=$E2E_BIN/../..}"
: "${SRC_DIR:=$(dirname "$0")/../..}"
K=$BUILD_DIR/tools/ktime
[ -x "$K" ] || e2e_fail_setup "launcher not built: $K (set BUILD_DIR)"
A=$E2E_BIN/app_cudart

# A program run through the launcher gets libktime; under AddressSanitizer it needs libasan
# first in LD_PRELOAD (the launcher keeps a sanitizer's runtime first). The launcher's shell
# and od/awk then run with libasan too: no leak check, theirs are not ktime's (every other
# script checks ktime's leaks).
KENV=
if [ -n "${E2E_PRELOAD_FIRST:-}" ]; then
    KENV="LD_PRELOAD=$E2E_PRELOAD_FIRST"
    [ "${E2E_SANITIZER:-}" = asan ] && KENV="$KENV ASAN_OPTIONS=$ASAN_OPTIONS:detect_leaks=0"
fi

# run_k NAME [VAR=VALUE...] ARGS...: the launcher with ARGS, from the current folder.
run_k() {
    _n=$1
    shift
    # shellcheck disable=SC2086
    $TIMEOUT env LD_LIBRARY_PATH="$LDP" $KENV "$@" >"$tmp/$_n.out" 2>"$tmp/$_n.err"
    echo $? >"$tmp/$_n.rc"
}

# has FILE TEXT: FILE holds the fixed string TEXT.
has() {
    grep -qF -- "$2" "$1" && return 0
    echo "no '$2' in $1:"
    head -n 20 "$1"
    return 1
}

# A program that prints its arguments and the KTIME_* variables and LD_PRELOAD it got.
cat >"$tmp/showenv" <<'EOF'
#!/bin/sh
echo "args $*"
env | grep -E '^(KTIME_[A-Z_]*|LD_PRELOAD)=' | grep -v '^KTIME_LIB=' | sort
EOF
chmod +x "$tmp/showenv"

# --- --version and --help -------------------------------------------------------------------
VERSION=$(sed -n 's/^#define PACKAGE_VERSION "\(.*\)"$/\1/p' "$BUILD_DIR/ac_config.h")
# The git revision the build names in its reports (empty outside git): --version names it too.
BUILD_ID=$(sed -n 's/^#define KTIME_BUILD_ID "\(.*\)"$/\1/p' "$BUILD_DIR/build_id.h")
run_k ver "$K" --version
check "--version: status 0, nothing on stderr" sh -c "[ \$(cat '$tmp/ver.rc') = 0 ] && [ ! -s '$tmp/ver.err' ]"
check "--version: first line 'ktime $VERSION${BUILD_ID:+ (git $BUILD_ID)}', as the reports' header" sh -c \
    "[ \"\$(head -n 1 '$tmp/ver.out')\" = 'ktime $VERSION${BUILD_ID:+ (git $BUILD_ID)}' ] && [ -n '$VERSION' ]"
run_plain vrep "$E2E_BIN/app_cudart" k=125000:1
run_ktime vrep "$E2E_BIN/app_cudart" k=125000:1
check "--version's revision is the one the library's report names" sh -c \
    "[ \"\$(grep '^ktime [0-9]' '$tmp/vrep.err' | sed 's/: GPU time per kernel.*//')\" = \"\$(head -n 1 '$tmp/ver.out')\" ]"
check "--version: the build tree's launcher names the build tree's library" \
    sh -c "l=\$(sed -n 's/^library //p' '$tmp/ver.out'); case \$l in /*) ;; *) exit 1 ;; esac; [ \"\$l\" -ef '$KTIME_LIB' ]"

run_k help "$K" --help
check "--help: status 0, on stdout, nothing on stderr" sh -c "[ \$(cat '$tmp/help.rc') = 0 ] && [ -s '$tmp/help.out' ] && [ ! -s '$tmp/help.err' ]"
run_k h "$K" -h
check "-h is --help" cmp "$tmp/help.out" "$tmp/h.out"
for o in '-w,' --warmup '-o,' --output '-f,' --format '-t,' --timer '-s,' --sample '-q,' --quiet --capture --version \
    'ktime report|merge|diff|plot' 'ktime ctl' 'ktime [OPTION...] -- report' KTIME_PYTHON; do
    check "--help lists $o" has "$tmp/help.out" "$o"
done

# Every variable the library reads (a setting of src/core/settings.def, as tools/ktime-settings
# lists them, or a "KTIME_..." string literal anywhere under src/) is listed with its meaning
# in --help, in libktime(7) and in ktime(1)'s list; so is docs/usage.md's table.
# (config.c's table of known names also lists the launcher's and the tests' own: not settings.)
{
    "$BUILD_DIR/tools/ktime-settings" --names
    find "$SRC_DIR/src" -name '*.[ch]' -exec grep -ohE '"KTIME_[A-Z0-9_]+"' {} + | tr -d '"'
} | grep -vxE 'KTIME_(LIBRARY|TOOL|RENDER|PYTHON|LAUNCHER_SET|LIB|SO|TEST_WARMUP)' | sort -u >"$tmp/vars"
check "the library reads at least the 14 documented variables" sh -c "[ \$(wc -l <'$tmp/vars') -ge 14 ]"
sed -n 's/^| `\(KTIME_[A-Z0-9_]*\)` |.*/\1/p' "$SRC_DIR/docs/usage.md" | sort -u >"$tmp/readme_vars"
check "docs/usage.md's table has variables" test -s "$tmp/readme_vars"
listed() { # FILE PATTERN-PREFIX VARS-FILE: every variable appears in FILE after PREFIX
    _bad=0
    while read -r _v; do
        grep -qE "$2$_v\\b" "$1" || { echo "$_v missing from $1"; _bad=1; }
    done <"$3"
    return $_bad
}
check "--help: every KTIME_* the library reads, as a setting" listed "$tmp/help.out" '^  ' "$tmp/vars"
check "--help: every variable of docs/usage.md's table" listed "$tmp/help.out" '^  ' "$tmp/readme_vars"
printf '%s\n' KTIME_CAPTURE KTIME_GROUP KTIME_TRACE KTIME_DUMP_SAMPLES KTIME_NVML KTIME_NVML_LIB \
    KTIME_LIBRARY KTIME_TOOL KTIME_RENDER KTIME_PYTHON >"$tmp/more_vars"
check "--help: the settings being added and the launcher's own" listed "$tmp/help.out" '^  ' "$tmp/more_vars"
check "libktime(7): every KTIME_* the library reads, as an entry" listed "$SRC_DIR/man/libktime.7" '^\.BI? ' "$tmp/vars"
check "libktime(7): every variable of docs/usage.md's table" listed "$SRC_DIR/man/libktime.7" '^\.BI? ' "$tmp/readme_vars"
check "ktime(1): every KTIME_* the library reads" listed "$SRC_DIR/man/ktime.1" '' "$tmp/vars"
check "ktime(1): the launcher's own variables, as entries" sh -c \
    "grep -qx '.B KTIME_LIBRARY' '$SRC_DIR/man/ktime.1' && grep -qx '.B KTIME_TOOL' '$SRC_DIR/man/ktime.1' && grep -qx '.B KTIME_RENDER' '$SRC_DIR/man/ktime.1'"

# --- options ----------------------------------------------------------------------------------
# expect_env NAME VAR=VALUE...: the program got exactly these KTIME_* settings.
expect_env() {
    _n=$1
    shift
    [ "$(cat "$tmp/$_n.rc")" = 0 ] || { echo "status $(cat "$tmp/$_n.rc")"; cat "$tmp/$_n.err"; return 1; }
    grep '^KTIME_' "$tmp/$_n.out" >"$tmp/$_n.got"
    # The launcher makes libktime NVTX's tool unless told otherwise (KTIME_NVTX=1).
    printf '%s\n' "$@" KTIME_NVTX=1 | sort >"$tmp/$_n.want"
    diff "$tmp/$_n.want" "$tmp/$_n.got"
}
i=0
for form in "-w5" "-w 5" "--warmup 5" "--warmup=5" "--warm=5" "--w 5"; do
    i=$((i + 1))
    # shellcheck disable=SC2086
    run_k w$i "$K" $form "$tmp/showenv"
    check "'ktime $form' sets KTIME_WARMUP=5" expect_env w$i KTIME_WARMUP=5
done
run_k all "$K" -qw3 -f json -t cupti -s4 --capture profiler-api "$tmp/showenv"
check "-qw3 -f json -t cupti -s4 --capture profiler-api" expect_env all KTIME_LOG=quiet KTIME_WARMUP=3 \
    KTIME_FORMAT=json KTIME_TIMER=cupti KTIME_SAMPLE=4 KTIME_CAPTURE=profiler-api
# --range, the earlier name of --capture, still works
run_k long "$K" --quiet --format=csv --timer both --sample=7 --range=profiler-api -o /dev/null "$tmp/showenv"
check "--quiet --format=csv --timer both --sample=7 --range=profiler-api -o /dev/null" expect_env long \
    KTIME_LOG=quiet KTIME_FORMAT=csv KTIME_TIMER=both KTIME_SAMPLE=7 KTIME_CAPTURE=profiler-api KTIME_OUTPUT=/dev/null
run_k dash "$K" -w 1 -- "$tmp/showenv" -w 9 --help
check "-- ends the options: the program gets -w 9 --help" sh -c "grep -qx 'args -w 9 --help' '$tmp/dash.out' && grep -qx KTIME_WARMUP=1 '$tmp/dash.out'"
run_k after "$K" "$tmp/showenv" -w 9
check "options after PROGRAM are the program's" sh -c "grep -qx 'args -w 9' '$tmp/after.out' && ! grep -q KTIME_WARMUP '$tmp/after.out'"
(cd "$tmp" && run_k dval "$K" -o -w "$tmp/showenv")
check "an option's value may start with -: -o -w" sh -c "grep -qx 'KTIME_OUTPUT=$tmp/-w' '$tmp/dval.out'"
run_k ostd "$K" -o - "$tmp/showenv"
check "-o - is standard output: KTIME_OUTPUT=- for the library, not a file named -" \
    sh -c "grep -qx 'KTIME_OUTPUT=-' '$tmp/ostd.out'"
(cd "$tmp" && run_k ostdr "$K" -o - -f json "$A" k=250000:20)
check "-o -: the program's output, then the report, on stdout; no file named -" sh -c \
    "[ \$(cat '$tmp/ostdr.rc') = 0 ] && [ ! -e '$tmp/-' ] && head -n 1 '$tmp/ostdr.out' | grep -qx 'driver 13000' && sed -n '/^{/,\$p' '$tmp/ostdr.out' >'$tmp/ostdr.json' && '$JCHECK' '$tmp/ostdr.json' 'kernels[mangled=k].timed' == 15"
check "LD_PRELOAD: libktime's absolute path, first (after a sanitizer's runtime)" \
    sh -c "l=\$(sed -n 's/^LD_PRELOAD=//p' '$tmp/all.out'); l=\${l#'${E2E_PRELOAD_FIRST:-}'}; l=\${l#:}; l=\${l%%:*};
           case \$l in /*) ;; *) exit 1 ;; esac; [ \"\$l\" -ef '$KTIME_LIB' ]"

# usage errors: status 2, one line on stderr ("ktime: WHAT (ktime --help for more)"), nothing
# on stdout, the program not run.
usage_error() {
    [ "$(cat "$tmp/$1.rc")" = 2 ] || { echo "status $(cat "$tmp/$1.rc"), want 2"; cat "$tmp/$1.err"; return 1; }
    [ ! -s "$tmp/$1.out" ] || { echo "stdout:"; cat "$tmp/$1.out"; return 1; }
    [ "$(cat "$tmp/$1.err")" = "ktime: $2 (ktime --help for more)" ] && return 0
    echo "stderr, want exactly one line 'ktime: $2 (ktime --help for more)':"
    cat "$tmp/$1.err"
    return 1
}
run_k u1 "$K" --bogus "$tmp/showenv"
check "unknown --bogus: status 2, one line" usage_error u1 "unknown option --bogus"
run_k u2 "$K" -x "$tmp/showenv"
check "unknown -x: status 2, one line" usage_error u2 "unknown option -x"
run_k u3 "$K" -q -w
check "-w without a value: status 2" usage_error u3 "option -w needs a value"
run_k u4 "$K" --output
check "--output without a value: status 2" usage_error u4 "option --output needs a value"
run_k u5 "$K" --quiet=yes "$tmp/showenv"
check "--quiet=yes: status 2" usage_error u5 "option --quiet takes no value"
run_k u6 "$K"
check "no arguments: status 2" usage_error u6 "no program given: ktime [OPTION...] PROGRAM [ARG...]"
run_k u7 "$K" -w 3 --
check "options and -- but no program: status 2" usage_error u7 "no program given: ktime [OPTION...] PROGRAM [ARG...]"
# A subcommand after launcher options would run a program of that name (GNU diff) under ktime.
for sub in report merge diff plot; do
    run_k "o_$sub" "$K" -q "$sub" a.json b.json
    check "ktime -q $sub: refused, status 2, one line saying why" usage_error "o_$sub" \
        "'$sub' is a subcommand: it comes first, with its own options (ktime $sub --help); to run a program named $sub, put -- before it"
done

# --- programs that cannot run, or cannot be reached ----------------------------------------
# one_line NAME STATUS TEXT: the launcher's status, and stderr is exactly the line TEXT.
one_line() {
    [ "$(cat "$tmp/$1.rc")" = "$2" ] && [ "$(cat "$tmp/$1.err")" = "$3" ] && [ ! -s "$tmp/$1.out" ] && return 0
    echo "status $(cat "$tmp/$1.rc") (want $2), stderr (want '$3'):"
    cat "$tmp/$1.err"
    return 1
}
run_k nf "$K" ktime-no-such-program-xyz
check "a program not found on PATH: 127, one line, not the shell's" \
    one_line nf 127 "ktime: ktime-no-such-program-xyz: command not found (not in PATH)"
run_k nf2 "$K" ./ktime-no-such-program-xyz
check "a program path that does not exist: 127, one line" \
    one_line nf2 127 "ktime: ./ktime-no-such-program-xyz: no such file"
run_k dir "$K" "$tmp"
check "a directory: 126, one line (not 'Permission denied')" one_line dir 126 "ktime: $tmp is a directory, not a program"
printf '#!/bin/sh\necho ran\n' >"$tmp/noexec"
run_k nx "$K" "$tmp/noexec"
check "a program that is not executable: status 126, not run, one line" \
    one_line nx 126 "ktime: $tmp/noexec is not executable (no x permission for you: chmod +x, or run it through its interpreter)"
mkdir "$tmp/pathnx" && cp "$tmp/noexec" "$tmp/pathnx/nxprog"
run_k nxp PATH="$tmp/pathnx:$PATH" "$K" nxprog
check "a program on PATH that is not executable: 126, one line naming the file" \
    one_line nxp 126 "ktime: nxprog: $tmp/pathnx/nxprog is not executable (no x permission for you)"
run_k nl KTIME_LIBRARY="$tmp/no/libktime.so" "$K" "$tmp/showenv"
check "KTIME_LIBRARY names no file: status 127, a message naming it, not run" \
    sh -c "[ \$(cat '$tmp/nl.rc') = 127 ] && grep -q '^ktime: libktime.so not found (no $tmp/no/libktime.so' '$tmp/nl.err' && [ ! -s '$tmp/nl.out' ]"

printf '#include <stdio.h>\nint main(void) { puts("ran"); return 3; }\n' >"$tmp/prog.c"
CC_=${E2E_CC:-cc}
if $CC_ -o "$tmp/dyn" "$tmp/prog.c" >"$tmp/cc.log" 2>&1; then
    run_k dyn "$K" "$tmp/dyn"
    check "a dynamically linked C program runs, with its own status" sh -c "[ \$(cat '$tmp/dyn.rc') = 3 ] && grep -qx ran '$tmp/dyn.out'"
else
    skip "a dynamically linked C program runs" "$CC_ cannot build one: $(head -n 1 "$tmp/cc.log")"
fi
if $CC_ -static -o "$tmp/static" "$tmp/prog.c" >"$tmp/cc.log" 2>&1; then
    run_k st "$K" "$tmp/static"
    check "a statically linked program: status 2, not run" sh -c "[ \$(cat '$tmp/st.rc') = 2 ] && [ ! -s '$tmp/st.out' ]"
    check "... the message says why" sh -c \
        "[ \"\$(cat '$tmp/st.err')\" = 'ktime: $tmp/static is statically linked; LD_PRELOAD cannot reach it' ]"
    mkdir "$tmp/sbin" && cp "$tmp/static" "$tmp/sbin/static_app"
    run_k stp PATH="$tmp/sbin:$PATH" "$K" -w 2 static_app
    check "... also when found on PATH" sh -c \
        "[ \$(cat '$tmp/stp.rc') = 2 ] && [ \"\$(cat '$tmp/stp.err')\" = 'ktime: static_app is statically linked; LD_PRELOAD cannot reach it' ]"
else
    skip "a statically linked program is refused" "no static libc ($CC_ -static failed; Debian: libc6-dev has libc.a)"
fi
if $CC_ -static-pie -fPIE -o "$tmp/spie" "$tmp/prog.c" >"$tmp/cc.log" 2>&1 && "$tmp/spie" >/dev/null 2>&1; [ $? = 3 ]; then
    run_k sp "$K" "$tmp/spie"
    check "a static-pie program: status 2, not run" sh -c "[ \$(cat '$tmp/sp.rc') = 2 ] && [ ! -s '$tmp/sp.out' ] && grep -q 'statically linked' '$tmp/sp.err'"
else
    skip "a static-pie program is refused" "$CC_ cannot build a static-pie program here"
fi
printf '#!/bin/sh\necho "script $*"\nexit 4\n' >"$tmp/script"
chmod +x "$tmp/script"
run_k sc "$K" "$tmp/script" a b
check "a #! script runs, with its own status" sh -c "[ \$(cat '$tmp/sc.rc') = 4 ] && grep -qx 'script a b' '$tmp/sc.out'"

# --- the report, and relative paths for a program that changes folders ---------------------
# cdrun DIR PROGRAM...: cd DIR, then run PROGRAM.
printf '#!/bin/sh\ncd "$1" || exit 99\nshift\nexec "$@"\n' >"$tmp/cdrun"
chmod +x "$tmp/cdrun"
mkdir "$tmp/work" "$tmp/elsewhere" "$tmp/work/lib"
run_plain base "$A" k=250000:20
(cd "$tmp/work" && run_k rel "$K" -w5 -o rel.json "$tmp/cdrun" "$tmp/elsewhere" "$A" k=250000:20)
check "through the launcher: same stdout and status as without" same_run base rel
check "-o rel.json with a program that changes folders: written where ktime was started" \
    sh -c "[ -s '$tmp/work/rel.json' ] && [ ! -e '$tmp/elsewhere/rel.json' ]"
check "... the report: warmup 5 of 20, 15 samples of exactly 250 us" \
    sh -c "'$JCHECK' '$tmp/work/rel.json' warmup == 5 && '$JCHECK' '$tmp/work/rel.json' 'kernels[mangled=k].calls' == 20"
check "... 15 samples of exactly 250 us" exact "$tmp/work/rel.json" k 15 250
ln -s "$KTIME_LIB" "$tmp/work/lib/libktime.so"
(cd "$tmp/work" && run_k rlib KTIME_LIBRARY=lib/libktime.so "$K" -o r2.json "$tmp/cdrun" "$tmp/elsewhere" "$A" k=250000:20)
check "a relative KTIME_LIBRARY is made absolute: the program that changed folders is timed" \
    sh -c "[ \$(cat '$tmp/rlib.rc') = 0 ] && '$JCHECK' '$tmp/work/r2.json' 'kernels[mangled=k].timed' == 15"
mkdir "$tmp/pct%p%hdir"
(cd "$tmp/pct%p%hdir" && run_k pct "$K" -o r.json "$tmp/cdrun" "$tmp/elsewhere" "$A" k=250000:20)
check "a % in the current folder's name is not a placeholder" \
    sh -c "[ \$(cat '$tmp/pct.rc') = 0 ] && '$JCHECK' '$tmp/pct%p%hdir/r.json' 'kernels[mangled=k].calls' == 20"
(cd "$tmp/work" && run_k tmpl "$K" -o 'r-%p.json' "$tmp/showenv")
check "-o's own placeholders are kept" sh -c "grep -qx 'KTIME_OUTPUT=$tmp/work/r-%p.json' '$tmp/tmpl.out'"

# --- the library found beside the launcher, through symbolic links ---------------------------
mkdir "$tmp/bin" "$tmp/bin2"
ln -s "$K" "$tmp/bin/ktime"
ln -s ../bin/ktime "$tmp/bin2/kt"
for l in "$tmp/bin/ktime" "$tmp/bin2/kt"; do
    run_k ln "$l" --version
    check "through the symlink ${l#"$tmp"/}: the build tree's library" \
        sh -c "l=\$(sed -n 's/^library //p' '$tmp/ln.out'); [ \"\$l\" -ef '$KTIME_LIB' ]"
done
(cd "$tmp/bin" && run_k path PATH="$tmp/bin:$PATH" ktime -o "$tmp/path.json" "$A" k=250000:20)
check "run as 'ktime' from PATH (a symlink): the program is timed" \
    sh -c "[ \$(cat '$tmp/path.rc') = 0 ] && '$JCHECK' '$tmp/path.json' 'kernels[mangled=k].timed' == 15"

# --- subcommands --------------------------------------------------------------------------------
if command -v python3 >/dev/null 2>&1; then
    # A stand-in for tools/ktime_tool.py, made here and never committed.
    printf 'import sys\nprint("tool " + " ".join(sys.argv[1:]))\nsys.exit(5)\n' >"$tmp/stand_in.py"
    for sub in report merge diff plot; do
        run_k "sub_$sub" KTIME_TOOL="$tmp/stand_in.py" "$K" "$sub" a.json --x
        check "ktime $sub ARGS runs python3 ktime_tool.py $sub ARGS, with its status" \
            sh -c "[ \$(cat '$tmp/sub_$sub.rc') = 5 ] && grep -qx 'tool $sub a.json --x' '$tmp/sub_$sub.out'"
    done
else
    skip "ktime report|merge|diff|plot run ktime_tool.py" "no python3"
fi
run_k ctlusage "$K" ctl
check "ktime ctl without arguments: its usage, status 2" sh -c "[ \$(cat '$tmp/ctlusage.rc') = 2 ] && grep -q '^usage: ktime ctl \[--wait SECONDS\] PID on|off|snapshot|reset|status' '$tmp/ctlusage.err'"
run_k ctlnone "$K" ctl 999999999 status
check "ktime ctl of no process: status 1" sh -c "[ \$(cat '$tmp/ctlnone.rc') = 1 ] && grep -qx 'ktime ctl: no process 999999999' '$tmp/ctlnone.err'"
printf '#!/bin/sh\necho "program report $*"\n' >"$tmp/bin2/report"
chmod +x "$tmp/bin2/report"
run_k prog PATH="$tmp/bin2:$PATH" KTIME_TOOL="$tmp/stand_in.py" "$K" -- report x
check "ktime -- report runs a program named report" sh -c "[ \$(cat '$tmp/prog.rc') = 0 ] && grep -qx 'program report x' '$tmp/prog.out'"
run_k notool KTIME_TOOL="$tmp/none/ktime_tool.py" "$K" report x
check "no ktime_tool.py: status 127 and a clear message" sh -c \
    "[ \$(cat '$tmp/notool.rc') = 127 ] && grep -q '^ktime: the offline tools are not installed (' '$tmp/notool.err'"
mkdir "$tmp/nopy"
printf 'print(1)\n' >"$tmp/tool.py"
run_k nopy PATH="$tmp/nopy" KTIME_TOOL="$tmp/tool.py" /bin/sh "$K" merge x
check "no python3: status 127 and a clear message" sh -c \
    "[ \$(cat '$tmp/nopy.rc') = 127 ] && grep -q \"^ktime: 'ktime merge' needs python3\" '$tmp/nopy.err'"
if command -v python3 >/dev/null 2>&1; then
    printf '#!/bin/sh\necho "my python $*"\n' >"$tmp/nopy/mypython"
    chmod +x "$tmp/nopy/mypython"
    run_k kpy KTIME_PYTHON="$tmp/nopy/mypython" KTIME_TOOL="$tmp/tool.py" "$K" diff a b
    check "KTIME_PYTHON names the Python the subcommands run" sh -c \
        "[ \$(cat '$tmp/kpy.rc') = 0 ] && grep -qx 'my python $tmp/tool.py diff a b' '$tmp/kpy.out'"
    run_k kpyno KTIME_PYTHON="$tmp/nopy/none" KTIME_TOOL="$tmp/tool.py" "$K" diff a b
    check "KTIME_PYTHON naming no program: 127, one line" one_line kpyno 127 \
        "ktime: 'ktime diff' needs python3: KTIME_PYTHON=$tmp/nopy/none is not a program"
fi
finish
