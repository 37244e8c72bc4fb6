#!/bin/sh
# output.sh - KTIME_OUTPUT that is not a plain new file: FIFOs (no reader, a reader, a
# reader that never reads), a directory, a socket, /dev/null, /dev/full; a report file
# replaced whole through a temporary (mode kept, or 0666 less the umask), or left whole when
# the disk is full; links, and a link planted by another user in a sticky world-writable
# directory; a write-protected file and a read-only directory (refused); several writers at
# once; KTIME_DUMP_SAMPLES and KTIME_TRACE opened the same way. A run that hangs is killed
# after 20 s and fails. TAP.
. "$(dirname "$0")/lib.sh"
need_ktime

A=$E2E_BIN/app_cudart
# The cases below would hang forever without the fix: fail them in seconds, not minutes.
if command -v timeout >/dev/null 2>&1; then
    TIMEOUT="timeout -k 2 20"
fi

# within NAME MS: the run took less than MS ms of wall time.
within() {
    _ms=$(cat "$tmp/$1.ms")
    [ "$_ms" -lt "$2" ] && return 0
    echo "took $_ms ms (limit $2 ms), exit status $(rc_of "$1")"
    return 1
}

# warned NAME TEXT: one ktime warning on stderr that contains TEXT.
warned() {
    [ "$(grep -c '^ktime: warning:' "$tmp/$1.err")" = 1 ] && grep -F -q "$2" "$tmp/$1.err" && return 0
    echo "want one warning containing: $2"
    head -n 20 "$tmp/$1.err"
    return 1
}

# text_report_on_stderr NAME N: the whole text report, N launches, is on stderr.
text_report_on_stderr() {
    grep -q '^ktime [0-9][^:]*: GPU time per kernel' "$tmp/$1.err" &&
        grep -q "^launches $2 seen: " "$tmp/$1.err" && grep -q '^timed  ' "$tmp/$1.err" && return 0
    echo "no complete text report with $2 launches on stderr:"
    head -n 20 "$tmp/$1.err"
    return 1
}

# no_temporaries DIR: nothing named .*.ktime-* left in DIR.
no_temporaries() {
    _l=$(ls -A "$1" | grep '^\..*\.ktime-')
    [ -z "$_l" ] && return 0
    echo "left in $1: $_l"
    return 1
}

# json_from_stderr NAME: the JSON report in NAME's stderr (from its first line "{").
json_from_stderr() {
    sed -n '/^{$/,$p' "$tmp/$1.err" >"$tmp/$1.stderr.json"
    echo "$tmp/$1.stderr.json"
}

mode_of() { stat -c %a "$1"; }
inode_of() { stat -c %i "$1"; }

run_plain b "$A" --sleep-ms 300 k=125000:20

# --- FIFOs --------------------------------------------------------------------------------
# No reader: opening it for writing would block until one comes, that is forever at exit.
mkfifo "$tmp/noreader"
run_ktime f1 KTIME_OUTPUT="$tmp/noreader" "$A" --sleep-ms 300 k=125000:20
check "FIFO with no reader: same exit status and stdout" same_run b f1
check "FIFO with no reader: the exit is not held (under 5 s)" within f1 5000
check "FIFO with no reader: one warning says so" warned f1 "KTIME_OUTPUT '$tmp/noreader' is a FIFO with no reader"
check "FIFO with no reader: the report follows on stderr" text_report_on_stderr f1 20

# A reader (already waiting when the program starts; the program sleeps 300 ms before its
# exit to leave it time to open the FIFO): the JSON report arrives whole.
mkfifo "$tmp/fifo.json"
$TIMEOUT cat "$tmp/fifo.json" >"$tmp/fifo-got.json" &
rpid=$!
run_ktime f2 KTIME_OUTPUT="$tmp/fifo.json" "$A" --sleep-ms 300 k=125000:20
wait "$rpid"
check "FIFO with a reader: same exit status and stdout" same_run b f2
check "FIFO with a reader: nothing on stderr" empty "$tmp/f2.err"
check "FIFO with a reader: the reader got the whole report" jc "$tmp/fifo-got.json" totals.launches_seen == 20
check "FIFO with a reader: 15 timed" jc "$tmp/fifo-got.json" 'kernels[mangled=k].timed' == 15

# A reader that never reads, and a report larger than the pipe holds (300 kernels with long
# names: hundreds of KB of JSON): writing gives up after KTIME_EXIT_WAIT_MS (300 ms) and the
# report follows on stderr.
BIG=$(awk 'BEGIN { for (i = 0; i < 300; i++)
    printf "k_%s_%03d=125000:1 ", "a_kernel_name_long_enough_that_three_hundred_rows_overflow_any_pipe_buffer", i }')
mkfifo "$tmp/stuck.json"
# shellcheck disable=SC2094
$TIMEOUT sleep 25 <"$tmp/stuck.json" &
spid=$!
# shellcheck disable=SC2086
run_plain bb "$A" --sleep-ms 300 $BIG
# shellcheck disable=SC2086
run_ktime f3 KTIME_OUTPUT="$tmp/stuck.json" KTIME_EXIT_WAIT_MS=300 "$A" --sleep-ms 300 $BIG
kill "$spid" 2>/dev/null
wait "$spid" 2>/dev/null
check "FIFO whose reader never reads: same exit status and stdout" same_run bb f3
check "FIFO whose reader never reads: the exit is held at most about KTIME_EXIT_WAIT_MS (under 5 s)" within f3 5000
check "FIFO whose reader never reads: one warning names the timeout" \
    warned f3 "writing KTIME_OUTPUT '$tmp/stuck.json' failed (Connection timed out)"
check "FIFO whose reader never reads: the whole report follows on stderr" \
    jc "$(json_from_stderr f3)" totals.launches_seen == 300

# --- what is not a file --------------------------------------------------------------------
mkdir "$tmp/adir"
run_ktime d1 KTIME_OUTPUT="$tmp/adir" "$A" --sleep-ms 300 k=125000:20
check "a directory: same exit status and stdout" same_run b d1
check "a directory: one warning says so" warned d1 "KTIME_OUTPUT '$tmp/adir' is a directory"
check "a directory: the report follows on stderr" text_report_on_stderr d1 20
check "a directory: nothing left in it" sh -c "[ -z \"\$(ls -A '$tmp/adir')\" ]"

if command -v python3 >/dev/null 2>&1 &&
    python3 -c "import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])" "$tmp/sock" 2>/dev/null &&
    [ -S "$tmp/sock" ]; then
    run_ktime s1 KTIME_OUTPUT="$tmp/sock" "$A" --sleep-ms 300 k=125000:20
    check "a socket: same exit status and stdout" same_run b s1
    check "a socket: one warning says so" warned s1 "KTIME_OUTPUT '$tmp/sock' is a socket"
    check "a socket: the report follows on stderr" text_report_on_stderr s1 20
else
    skip "a socket" "no python3 to make one"
fi

run_ktime n1 KTIME_OUTPUT=/dev/null "$A" --sleep-ms 300 k=125000:20
check "/dev/null: same exit status and stdout" same_run b n1
check "/dev/null: written, nothing on stderr" empty "$tmp/n1.err"

if [ -c /dev/full ]; then
    run_ktime n2 KTIME_OUTPUT=/dev/full "$A" --sleep-ms 300 k=125000:20
    check "/dev/full: same exit status and stdout" same_run b n2
    check "/dev/full: one warning names the error" \
        warned n2 "writing KTIME_OUTPUT '/dev/full' failed (No space left on device)"
    check "/dev/full: the report follows on stderr, nothing lost" text_report_on_stderr n2 20
else
    skip "/dev/full" "no /dev/full"
fi

# --- report files --------------------------------------------------------------------------
# An existing report is replaced by a rename (a new inode: a reader never sees half of it),
# its mode kept; no temporary is left.
echo "old report" >"$tmp/r.json"
chmod 604 "$tmp/r.json"
ino=$(inode_of "$tmp/r.json")
run_ktime r1 KTIME_OUTPUT="$tmp/r.json" "$A" --sleep-ms 300 k=125000:20
check "existing file: same exit status and stdout" same_run b r1
check "existing file: the new report is in it" jc "$tmp/r.json" totals.launches_seen == 20
check "existing file: its mode (604) is kept" test "$(mode_of "$tmp/r.json")" = 604
check "existing file: replaced by a rename, not rewritten in place" test "$(inode_of "$tmp/r.json")" != "$ino"
check "existing file: no temporary left" no_temporaries "$tmp"

# A new file gets 0666 less the program's umask.
run_ktime r2 KTIME_OUTPUT="$tmp/new.json" sh -c 'umask 027; exec "$0" "$@"' "$A" --sleep-ms 300 k=125000:20
check "new file, umask 027: written" jc "$tmp/new.json" totals.launches_seen == 20
check "new file, umask 027: mode 640" test "$(mode_of "$tmp/new.json")" = 640

# A full disk (RLIMIT_FSIZE of a few KB, SIGXFSZ ignored: writes fail with EFBIG): the old
# report is left whole, no temporary is left, and the report follows on stderr (a pipe, which
# the limit does not touch).
printf 'old report\n' >"$tmp/full.json"
chmod 644 "$tmp/full.json"
(
    trap '' XFSZ
    ulimit -f 4
    $TIMEOUT env LD_LIBRARY_PATH="$LDP" LD_PRELOAD="${E2E_PRELOAD_FIRST:+$E2E_PRELOAD_FIRST:}$KTIME_LIB" \
        KTIME_OUTPUT="$tmp/full.json" "$A" --sleep-ms 300 $BIG 2>&1 >/dev/null
    echo $? >"$tmp/fd.rc"
) | cat >"$tmp/fd.err"
check "full disk: the program's exit status (0) is kept" test "$(cat "$tmp/fd.rc")" = 0
check "full disk: the old report is left whole" sh -c "[ \"\$(cat '$tmp/full.json')\" = 'old report' ]"
check "full disk: no temporary left" no_temporaries "$tmp"
check "full disk: one warning names the error and says the file is left as it was" \
    warned fd "writing KTIME_OUTPUT '$tmp/full.json' failed (File too large); the file is left as it was"
check "full disk: the whole report follows on stderr" jc "$(json_from_stderr fd)" totals.launches_seen == 300

# A link in an ordinary directory is followed: the file it names is replaced (its mode kept),
# the link stays a link.
mkdir "$tmp/real"
echo "old target" >"$tmp/real/target.json"
chmod 600 "$tmp/real/target.json"
ln -s "$tmp/real/target.json" "$tmp/link.json"
run_ktime l1 KTIME_OUTPUT="$tmp/link.json" "$A" --sleep-ms 300 k=125000:20
check "link: same exit status and stdout" same_run b l1
check "link: nothing on stderr" empty "$tmp/l1.err"
check "link: the file it names got the report" jc "$tmp/real/target.json" totals.launches_seen == 20
check "link: the link is still a link to it" test "$(readlink "$tmp/link.json")" = "$tmp/real/target.json"
check "link: the target's mode (600) is kept" test "$(mode_of "$tmp/real/target.json")" = 600
check "link: no temporary left beside the link or the target" \
    sh -c "[ -z \"\$(ls -A '$tmp' '$tmp/real' | grep '^\\..*\\.ktime-')\" ]"

# A world-writable sticky directory (like /tmp) with a link in it that another user owns:
# not followed (another user could have planted it to have this one overwrite a file), the
# report follows on stderr. A link this user owns there is followed. Needs root to give the
# link away.
if [ "$(id -u)" = 0 ]; then
    mkdir "$tmp/sticky"
    chmod 1777 "$tmp/sticky"
    echo "precious" >"$tmp/victim.json"
    ln -s "$tmp/victim.json" "$tmp/sticky/r.json"
    chown -h 65534:65534 "$tmp/sticky/r.json"
    run_ktime y1 KTIME_OUTPUT="$tmp/sticky/r.json" "$A" --sleep-ms 300 k=125000:20
    check "another user's link in a sticky directory: same exit status and stdout" same_run b y1
    check "another user's link in a sticky directory: not followed, the file it names untouched" \
        sh -c "[ \"\$(cat '$tmp/victim.json')\" = precious ]"
    check "another user's link in a sticky directory: still a link" test -L "$tmp/sticky/r.json"
    check "another user's link in a sticky directory: one warning says why" \
        warned y1 "KTIME_OUTPUT '$tmp/sticky/r.json' is a symbolic link owned by another user in a world-writable sticky directory"
    check "another user's link in a sticky directory: the report follows on stderr" \
        jc "$(json_from_stderr y1)" totals.launches_seen == 20
    check "another user's link in a sticky directory: no temporary left" no_temporaries "$tmp/sticky"

    ln -s "$tmp/victim.json" "$tmp/sticky/mine.json"
    run_ktime y2 KTIME_OUTPUT="$tmp/sticky/mine.json" "$A" --sleep-ms 300 k=125000:20
    check "own link in a sticky directory: followed, nothing on stderr" empty "$tmp/y2.err"
    check "own link in a sticky directory: the file it names got the report" \
        jc "$tmp/victim.json" totals.launches_seen == 20
    check "own link in a sticky directory: still a link" test -L "$tmp/sticky/mine.json"

    # KTIME_DUMP_SAMPLES and KTIME_TRACE through another user's link there: not followed
    # either; the timings are not touched.
    ln -s "$tmp/victim.json" "$tmp/sticky/samples.txt"
    ln -s "$tmp/victim.json" "$tmp/sticky/trace.json"
    chown -h 65534:65534 "$tmp/sticky/samples.txt" "$tmp/sticky/trace.json"
    echo "precious" >"$tmp/victim.json"
    run_ktime y3 KTIME_FORMAT=json KTIME_OUTPUT="$tmp/y3.json" KTIME_DUMP_SAMPLES="$tmp/sticky/samples.txt" \
        "$A" --sleep-ms 300 k=125000:20
    check "samples through another user's link in a sticky directory: not followed" \
        sh -c "[ \"\$(cat '$tmp/victim.json')\" = precious ] && [ -L '$tmp/sticky/samples.txt' ]"
    check "samples through another user's link in a sticky directory: one warning says why" \
        warned y3 "KTIME_DUMP_SAMPLES '$tmp/sticky/samples.txt' is a symbolic link owned by another user in a world-writable sticky directory (not followed); no samples are dumped"
    check "samples through another user's link in a sticky directory: timings exact" exact "$tmp/y3.json" k 15 125
    echo "precious" >"$tmp/victim.json"
    run_ktime y4 KTIME_FORMAT=json KTIME_OUTPUT="$tmp/y4.json" KTIME_TRACE="$tmp/sticky/trace.json" \
        "$A" --sleep-ms 300 k=125000:20
    check "trace through another user's link in a sticky directory: not followed" \
        sh -c "[ \"\$(cat '$tmp/victim.json')\" = precious ] && [ -L '$tmp/sticky/trace.json' ]"
    check "trace through another user's link in a sticky directory: one warning says why" \
        warned y4 "KTIME_TRACE '$tmp/sticky/trace.json' is a symbolic link owned by another user"
else
    skip "another user's link in a sticky directory" "needs root to chown a link"
fi

# A write-protected report file (0444): refused, left as it is (not replaced through a
# rename, which its directory would allow), the report on stderr.
printf 'protected report\n' >"$tmp/wp.json"
chmod 444 "$tmp/wp.json"
ino=$(inode_of "$tmp/wp.json")
run_ktime wp KTIME_OUTPUT="$tmp/wp.json" "$A" --sleep-ms 300 k=125000:20
check "write-protected file: same exit status and stdout" same_run b wp
check "write-protected file: one warning says so" \
    warned wp "KTIME_OUTPUT '$tmp/wp.json' is write-protected (mode 444); left as it is; the report follows on stderr"
check "write-protected file: the report follows on stderr" jc "$(json_from_stderr wp)" totals.launches_seen == 20
check "write-protected file: left as it was" sh -c "[ \"\$(cat '$tmp/wp.json')\" = 'protected report' ]"
check "write-protected file: the same file, its mode kept" \
    test "$(inode_of "$tmp/wp.json") $(mode_of "$tmp/wp.json")" = "$ino 444"
check "write-protected file: no temporary left" no_temporaries "$tmp"

# Several writers of one report file at once, in an ordinary directory: each replaces it
# whole, so it is always one whole report.
for i in 1 2 3 4 5 6; do
    run_ktime "cw$i" KTIME_FORMAT=json KTIME_OUTPUT="$tmp/cw.json" "$A" k=125000:20 &
done
wait
check "6 writers at once: the file is one whole report" exact "$tmp/cw.json" k 15 125
check "6 writers at once: no temporary left" no_temporaries "$tmp"

# A read-only directory with a writable report file in it: no temporary can be made there,
# and writing the file in place would let a reader, or a second writer, see half a report
# (6 writers at once here): refused, the file left as it is, the report on stderr. Root
# passes any mode: run as nobody then.
mkdir "$tmp/ro"
echo "old report, longer than nothing" >"$tmp/ro/r.json"
chmod 666 "$tmp/ro/r.json"
ino=$(inode_of "$tmp/ro/r.json")
chmod 555 "$tmp/ro"
if [ "$(id -u)" != 0 ]; then
    AS=
elif command -v setpriv >/dev/null 2>&1 && chmod 755 "$tmp" &&
    setpriv --reuid=65534 --regid=65534 --clear-groups test -r "$KTIME_LIB" -a -x "$A"; then
    AS="setpriv --reuid=65534 --regid=65534 --clear-groups"
else
    AS=none
fi
if [ "$AS" != none ]; then
    run_plain rob "$A" k=125000:20
    for i in 1 2 3 4 5 6; do
        # shellcheck disable=SC2086
        run_ktime "ro$i" KTIME_FORMAT=json KTIME_OUTPUT="$tmp/ro/r.json" $AS "$A" k=125000:20 &
    done
    wait
    for i in 1 2 3 4 5 6; do
        check "read-only directory, writer $i of 6: same exit status and stdout" same_run rob "ro$i"
        check "read-only directory, writer $i of 6: one warning says why" \
            warned "ro$i" "KTIME_OUTPUT '$tmp/ro/r.json' is left as it is: no temporary file can be made in its directory to replace it whole (Permission denied); the report follows on stderr"
        check "read-only directory, writer $i of 6: the whole report on stderr" exact "$(json_from_stderr "ro$i")" k 15 125
    done
    check "read-only directory: the file left as it was" \
        sh -c "[ \"\$(cat '$tmp/ro/r.json')\" = 'old report, longer than nothing' ]"
    check "read-only directory: same file (inode)" test "$(inode_of "$tmp/ro/r.json")" = "$ino"
else
    skip "read-only directory" "root without setpriv, or the build is not readable by nobody"
fi
chmod 755 "$tmp/ro"

# --- KTIME_DUMP_SAMPLES, opened the same way ----------------------------------------------
run_plain db "$A" k=125000:20
# A FIFO with no reader: refused at once; the drain thread is not held, so every launch is
# timed exactly.
mkfifo "$tmp/dump.fifo"
run_ktime dn KTIME_FORMAT=json KTIME_OUTPUT="$tmp/dn.json" KTIME_DUMP_SAMPLES="$tmp/dump.fifo" "$A" k=125000:20
check "samples to a FIFO with no reader: same exit status and stdout" same_run db dn
check "samples to a FIFO with no reader: one warning says so" \
    warned dn "KTIME_DUMP_SAMPLES '$tmp/dump.fifo' is a FIFO with no reader; no samples are dumped"
check "samples to a FIFO with no reader: every launch timed, exactly (15 of 20 at 125 us)" exact "$tmp/dn.json" k 15 125
check "samples to a FIFO with no reader: the report has no note" \
    sh -c "[ -s '$tmp/dn.json' ] && [ -z \"\$('$JCHECK' '$tmp/dn.json' note 2>/dev/null)\" ]"

# A FIFO with a reader: the samples arrive.
mkfifo "$tmp/dump2.fifo"
$TIMEOUT cat "$tmp/dump2.fifo" >"$tmp/dump2.got" &
rpid=$!
run_ktime dr KTIME_FORMAT=json KTIME_OUTPUT="$tmp/dr.json" KTIME_DUMP_SAMPLES="$tmp/dump2.fifo" "$A" --sleep-ms 300 k=125000:20
wait "$rpid"
check "samples to a FIFO with a reader: nothing on stderr" empty "$tmp/dr.err"
check "samples to a FIFO with a reader: the header and 15 samples of 125 us" \
    sh -c "head -n 1 '$tmp/dump2.got' | grep -q '^# ktime samples of pid' && [ \$(grep -c '^k	0	125.0000\$' '$tmp/dump2.got') = 15 ] && [ \$(wc -l <'$tmp/dump2.got') = 16 ]"

# A write-protected file: refused, left as it is.
printf 'keep\n' >"$tmp/dump.ro"
chmod 444 "$tmp/dump.ro"
run_ktime dp KTIME_FORMAT=json KTIME_OUTPUT="$tmp/dp.json" KTIME_DUMP_SAMPLES="$tmp/dump.ro" "$A" k=125000:20
check "samples to a write-protected file: one warning says so" \
    warned dp "KTIME_DUMP_SAMPLES '$tmp/dump.ro' is write-protected (mode 444); left as it is; no samples are dumped"
check "samples to a write-protected file: left as it was" grep -qx keep "$tmp/dump.ro"
check "samples to a write-protected file: timings exact" exact "$tmp/dp.json" k 15 125

# An existing samples file is replaced whole (a new inode), like a report.
printf 'old samples\n' >"$tmp/dump.txt"
ino=$(inode_of "$tmp/dump.txt")
run_ktime dw KTIME_FORMAT=json KTIME_OUTPUT="$tmp/dw.json" KTIME_DUMP_SAMPLES="$tmp/dump.txt" "$A" k=125000:20
check "samples to an existing file: nothing on stderr" empty "$tmp/dw.err"
check "samples to an existing file: replaced by the header and 15 samples" \
    sh -c "[ \$(grep -c '^k	0	125.0000\$' '$tmp/dump.txt') = 15 ] && [ \$(wc -l <'$tmp/dump.txt') = 16 ]"
check "samples to an existing file: replaced by a rename" test "$(inode_of "$tmp/dump.txt")" != "$ino"
check "samples to an existing file: no temporary left" no_temporaries "$tmp"

finish
