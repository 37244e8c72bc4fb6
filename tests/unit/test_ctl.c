/* test_ctl.c - the control channel and the periodic deadline on a fake clock: the private
 * directory (made, refused when not private), requests read only when a read is due, several
 * requests in one read, junk and over-long lines dropped, unknown words refused, answers
 * found by their ID, and a channel whose process is gone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctl.h"
#include "every.h"

static void test_every(void **state)
{
    struct every e;

    every_init(&e, 1000, 0);
    assert_false(every_due(&e, 999.9));
    assert_true(every_due(&e, 1000));
    assert_false(every_due(&e, 1000));
    assert_true(every_left_ms(&e, 1500) == 500);
    /* Missed deadlines are skipped: at 3500 once, then at 4000. */
    assert_true(every_due(&e, 3500));
    assert_false(every_due(&e, 3999));
    assert_true(every_due(&e, 4000));
    every_init(&e, 0, 0);
    assert_false(every_due(&e, 1e12));
    assert_true(every_left_ms(&e, 0) < 0);
}

static char xdg[64];

static void make_xdg(void)
{
    snprintf(xdg, sizeof xdg, "/tmp/ktime-test-ctl.XXXXXX");
    assert_non_null(mkdtemp(xdg)); /* mode 0700 */
}

static void remove_xdg(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", xdg);
    assert_int_equal(system(cmd), 0);
}

static void test_dir(void **state)
{
    char dir[4096], want[128];
    const char *why = NULL;
    struct stat st;

    make_xdg();
    snprintf(want, sizeof want, "%s/ktime", xdg);
    /* Not made without create. */
    assert_int_equal(ctl_dir(dir, sizeof dir, xdg, false, &why), -1);
    assert_int_equal(ctl_dir(dir, sizeof dir, xdg, true, &why), 0);
    assert_string_equal(dir, want);
    assert_int_equal(lstat(dir, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0700);
    /* Opened to the group: refused, saying why. */
    assert_int_equal(chmod(dir, 0750), 0);
    assert_int_equal(ctl_dir(dir, sizeof dir, xdg, true, &why), -1);
    assert_non_null(strstr(why, "not a private directory of yours"));
    assert_non_null(strstr(why, "mode 0750"));
    assert_int_equal(chmod(want, 0700), 0);
    /* A link where the directory should be: refused. */
    assert_int_equal(rename(want, "/tmp/ktime-test-ctl-moved"), 0);
    assert_int_equal(symlink("/tmp/ktime-test-ctl-moved", want), 0);
    assert_int_equal(ctl_dir(dir, sizeof dir, xdg, true, &why), -1);
    assert_non_null(strstr(why, "symbolic link"));
    unlink(want);
    rmdir("/tmp/ktime-test-ctl-moved");
    /* XDG_RUNTIME_DIR open to others, relative, or unset: /tmp/ktime-UID instead. */
    assert_int_equal(chmod(xdg, 0755), 0);
    snprintf(want, sizeof want, "/tmp/ktime-%lu", (unsigned long)geteuid());
    ctl_dir(dir, sizeof dir, xdg, false, &why);
    assert_string_equal(dir, want);
    ctl_dir(dir, sizeof dir, "relative", false, &why);
    assert_string_equal(dir, want);
    ctl_dir(dir, sizeof dir, NULL, false, &why);
    assert_string_equal(dir, want);
    remove_xdg();
}

static void test_requests(void **state)
{
    char dir[4096], text[256], fifo[4200];
    const char *why = NULL;
    struct ctl c;
    struct ctl_request q;
    bool ok;

    make_xdg();
    assert_int_equal(ctl_dir(dir, sizeof dir, xdg, true, &why), 0);
    assert_int_equal(ctl_open(&c, dir, 12345, 0, &why), 0);
    assert_int_equal(ctl_send(dir, 12345, "a1", "off", &why), 0);
    /* Read only when due: CTL_POLL_MS after the open. */
    assert_int_equal(ctl_poll(&c, CTL_POLL_MS - 1, &q), 0);
    assert_int_equal(ctl_poll(&c, CTL_POLL_MS, &q), 1);
    assert_string_equal(q.id, "a1");
    assert_int_equal(q.cmd, CTL_OFF);
    assert_int_equal(ctl_poll(&c, CTL_POLL_MS, &q), 0);
    /* Two in one read: both given, the second without waiting for the next read. */
    assert_int_equal(ctl_send(dir, 12345, "b-2", "status", &why), 0);
    assert_int_equal(ctl_send(dir, 12345, "c.3", "bogus", &why), 0);
    assert_int_equal(ctl_poll(&c, 2 * CTL_POLL_MS + 1, &q), 1);
    assert_string_equal(q.id, "b-2");
    assert_int_equal(q.cmd, CTL_STATUS);
    assert_int_equal(ctl_poll(&c, 2 * CTL_POLL_MS + 1, &q), 1);
    assert_string_equal(q.id, "c.3");
    assert_int_equal(q.cmd, CTL_BAD);
    assert_string_equal(q.word, "bogus");
    assert_int_equal(ctl_poll(&c, 2 * CTL_POLL_MS + 1, &q), 0);
    /* Junk: no ID, an ID with a bad character, a line longer than the buffer: dropped. Three
     * words: a request, refused (not a command). The request after them still comes. */
    snprintf(fifo, sizeof fifo, "%s/12345.ctl", dir);
    int fd = open(fifo, O_WRONLY | O_NONBLOCK);
    assert_true(fd >= 0);
    char junk[2048];
    memset(junk, 'x', sizeof junk);
    assert_int_equal(write(fd, "\nonlyone\nb/d on\nx on extra\n", 27), 27);
    assert_int_equal(write(fd, junk, sizeof junk), (ssize_t)sizeof junk);
    assert_int_equal(write(fd, "\nd4 reset\n", 10), 10);
    close(fd);
    int got = 0;
    double t = 3 * CTL_POLL_MS;
    for (; t < 20 * CTL_POLL_MS && !got; t += CTL_POLL_MS)
        got = ctl_poll(&c, t, &q);
    assert_int_equal(got, 1);
    assert_string_equal(q.id, "x");
    assert_int_equal(q.cmd, CTL_BAD);
    got = 0;
    for (; t < 40 * CTL_POLL_MS && !got; t += CTL_POLL_MS)
        got = ctl_poll(&c, t, &q);
    assert_int_equal(got, 1);
    assert_string_equal(q.id, "d4");
    assert_int_equal(q.cmd, CTL_RESET);
    /* Answers, found by ID; the last answer to an ID counts. */
    assert_int_equal(ctl_find_answer(dir, 12345, "a1", &ok, text, sizeof text), 0);
    struct ctl_request a1 = { .id = "a1", .cmd = CTL_OFF };
    assert_int_equal(ctl_answer(&c, &a1, true, "timing off\nsecond line"), 0);
    struct ctl_request c3 = { .id = "c.3", .cmd = CTL_BAD };
    assert_int_equal(ctl_answer(&c, &c3, false, "'bogus' is not a command"), 0);
    assert_int_equal(ctl_find_answer(dir, 12345, "a1", &ok, text, sizeof text), 1);
    assert_true(ok);
    assert_string_equal(text, "timing off second line");
    assert_int_equal(ctl_find_answer(dir, 12345, "c.3", &ok, text, sizeof text), 1);
    assert_false(ok);
    assert_string_equal(text, "'bogus' is not a command");
    assert_int_equal(ctl_find_answer(dir, 12345, "c", &ok, text, sizeof text), 0);
    /* Not a request ID, or a word with a space: not sent. */
    assert_int_equal(ctl_send(dir, 12345, "a b", "on", &why), -1);
    assert_int_equal(ctl_send(dir, 12345, "ok", "on off", &why), -1);
    /* Closed: its files gone, a send finds nothing. */
    ctl_close(&c);
    assert_int_equal(access(fifo, F_OK), -1);
    assert_int_equal(ctl_send(dir, 12345, "e5", "on", &why), -1);
    assert_int_equal(errno, ENOENT);
    /* A FIFO left by a process that is gone: nobody reads it. */
    assert_int_equal(mkfifo(fifo, 0600), 0);
    assert_int_equal(ctl_send(dir, 12345, "f6", "on", &why), -1);
    assert_int_equal(errno, ENXIO);
    assert_non_null(strstr(why, "no reader"));
    /* A new process of that pid takes the place over. */
    assert_int_equal(ctl_open(&c, dir, 12345, 0, &why), 0);
    assert_int_equal(ctl_send(dir, 12345, "g7", "snapshot", &why), 0);
    assert_int_equal(ctl_poll(&c, CTL_POLL_MS, &q), 1);
    assert_int_equal(q.cmd, CTL_SNAPSHOT);
    ctl_close(&c);
    remove_xdg();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every),
        cmocka_unit_test(test_dir),
        cmocka_unit_test(test_requests),
    };
    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
