/* test_conditions.c - the run's conditions folded reading by reading (conditions.h): clock
 * and temperature ranges, throttle time counted toward the reasons of the later reading,
 * other processes over the run (at start, at end, deduplicated, past the table, named with
 * control characters), pids of another pid namespace; and the report's lines and JSON for
 * each case, not checked included. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conditions.h"
#include "jsonout.h"
#include "report.h"
#include "jsonw.h"
#include "text.h"

/* A reading at time t with every figure read: nothing else on the GPU. */
static struct cond_sample reading(double t)
{
    struct cond_sample s;

    memset(&s, 0, sizeof s);
    s.t = t;
    s.procs_ok = s.sm_ok = s.mem_ok = s.reasons_ok = s.temp_ok = true;
    s.nprocs = 1;
    s.self_listed = true;
    s.sm_mhz = 1980;
    s.mem_mhz = 2619;
    s.temp_c = 40;
    return s;
}

static void other(struct cond_sample *s, long pid, const char *name)
{
    if (s->nothers < COND_MAX_OTHERS) {
        s->others[s->nothers].pid = pid;
        snprintf(s->others[s->nothers].name, COND_NAME, "%s", name);
    }
    s->nothers++;
    s->nprocs++;
}

/* What a writer puts out, as a string (freed by the caller). */
static char *render(const struct conditions *c, const int *ord, int n, bool json)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    struct model m;
    struct jw w;

    assert_non_null(f);
    memset(&m, 0, sizeof m);
    assert_int_equal(model_cond_section(&m, c, ord, n), 0);
    if (json) {
        jw_init(&w, f);
        json_conditions(&w, m.cond);
    } else {
        text_conditions(f, m.cond);
    }
    fclose(f);
    model_free(&m);
    return buf;
}

static struct cond_device *mapped(struct conditions *c, int ordinal)
{
    struct cond_device *d = cond_device(c, ordinal);

    assert_non_null(d);
    d->mapped = true;
    snprintf(d->pci_bus_id, sizeof d->pci_bus_id, "0000:%02x:00.0", ordinal + 1);
    return d;
}

static void ranges(void **state)
{
    struct conditions c;
    struct cond_sample s;
    struct cond_device *d;

    cond_init(&c);
    d = mapped(&c, 0);
    s = reading(1.0);
    s.sm_mhz = 1410, s.mem_mhz = 1593, s.temp_c = 71;
    cond_add_sample(d, &s, false);
    s = reading(1.1);
    s.sm_mhz = 1980, s.temp_c = 45;
    s.mem_ok = false; /* one reading without a memory clock */
    cond_add_sample(d, &s, false);
    s = reading(1.2);
    s.sm_mhz = 1700, s.mem_mhz = 2619, s.temp_c = 50;
    cond_add_sample(d, &s, true);
    assert_int_equal(d->samples, 3);
    assert_int_equal(d->sm_min, 1410);
    assert_int_equal(d->sm_max, 1980);
    assert_int_equal(d->mem_samples, 2);
    assert_int_equal(d->mem_min, 1593);
    assert_int_equal(d->mem_max, 2619);
    assert_int_equal(d->temp_min, 45);
    assert_int_equal(d->temp_max, 71);
    assert_true(d->last_t - d->first_t > 0.19 && d->last_t - d->first_t < 0.21);
}

static void throttle_time(void **state)
{
    struct conditions c;
    struct cond_sample s;
    struct cond_device *d;
    char *t;

    cond_init(&c);
    c.checked = true;
    d = mapped(&c, 0);
    s = reading(10.0);
    s.reasons = 1u << COND_R_SW_POWER_CAP; /* the first reading: no interval before it */
    cond_add_sample(d, &s, false);
    s = reading(10.5);
    s.reasons = (1u << COND_R_SW_POWER_CAP) | (1u << COND_R_HW_POWER_BRAKE);
    cond_add_sample(d, &s, false);
    s = reading(12.0);
    s.reasons = 1u << COND_R_HW_THERMAL | 1u << COND_R_HW_SLOWDOWN;
    cond_add_sample(d, &s, false);
    s = reading(12.25);
    s.reasons = 0;
    cond_add_sample(d, &s, true);
    assert_float_equal(d->reason_s[COND_R_SW_POWER_CAP], 0.5, 1e-9);
    assert_float_equal(d->reason_s[COND_R_HW_POWER_BRAKE], 0.5, 1e-9);
    assert_float_equal(d->power_s, 0.5, 1e-9); /* either power reason: counted once */
    assert_float_equal(d->thermal_s, 1.5, 1e-9);
    assert_float_equal(d->reason_s[COND_R_HW_SLOWDOWN], 1.5, 1e-9);
    assert_int_equal(d->reason_samples, 4);
    t = render(&c, NULL, 0, false);
    assert_non_null(strstr(t, "; power throttling 0.5 s, thermal throttling 1.5 s, hardware slowdown 1.5 s;"));
    assert_non_null(strstr(t, "warning: gpu 0's clocks were slowed (sw_power_cap 0.5 s, hw_slowdown 1.5 s, hw_thermal 1.5 s, hw_power_brake 0.5 s)"));
    free(t);
    t = render(&c, NULL, 0, true);
    assert_non_null(strstr(t, "\"power_s\": 0.500, \"thermal_s\": 1.500"));
    assert_non_null(strstr(t, "\"reasons_seen\": [\"sw_power_cap\", \"hw_slowdown\", \"hw_thermal\", \"hw_power_brake\"]"));
    free(t);
}

/* Throttling seen by a single reading has no time to count: the text says "seen". */
static void throttle_one_reading(void **state)
{
    struct conditions c;
    struct cond_sample s = reading(3.0);
    char *t;

    cond_init(&c);
    c.checked = true;
    s.reasons = 1u << COND_R_SW_THERMAL;
    cond_add_sample(mapped(&c, 2), &s, true);
    t = render(&c, NULL, 0, false);
    assert_non_null(strstr(t, "conditions: gpu 2 idle apart from this process; clocks not locked, "
                              "SM clock 1980 MHz, memory clock 2619 MHz; thermal throttling seen; "
                              "40 C; 1 reading\n"));
    free(t);
}

static void others_over_the_run(void **state)
{
    struct conditions c;
    struct cond_sample s;
    struct cond_device *d;
    char *t;

    cond_init(&c);
    c.checked = true;
    d = mapped(&c, 0);
    s = reading(1);
    other(&s, 100, "python3");
    cond_add_sample(d, &s, false);
    s = reading(2);
    other(&s, 100, "python3");
    other(&s, 200, "");
    cond_add_sample(d, &s, false);
    s = reading(3);
    other(&s, 200, "spin");
    cond_add_sample(d, &s, true);
    assert_int_equal(d->nothers, 2);
    assert_true(d->others[0].at_start && !d->others[0].at_end);
    assert_int_equal(d->others[0].samples, 2);
    assert_true(!d->others[1].at_start && d->others[1].at_end);
    assert_string_equal(d->others[1].name, "spin"); /* named once it could be read */
    assert_int_equal(d->others_at_start, 1);
    assert_int_equal(d->others_at_end, 1);
    assert_int_equal(d->others_max, 2);
    assert_false(d->pid_mismatch);
    t = render(&c, NULL, 0, false);
    assert_non_null(strstr(t, "conditions: gpu 0 shared with 2 other processes (python3 pid 100, spin pid 200); "));
    assert_non_null(strstr(t, "warning: gpu 0 was shared with 2 other processes during the run"));
    free(t);
    t = render(&c, NULL, 0, true);
    assert_non_null(strstr(t, "{ \"pid\": 100, \"name\": \"python3\", \"at_start\": true, \"at_end\": false, \"samples\": 2 }"));
    assert_non_null(strstr(t, "\"other_process_count\": 2, \"other_processes_at_start\": 1, \"other_processes_at_end\": 1"));
    free(t);
}

static void more_others_than_kept(void **state)
{
    struct conditions c;
    struct cond_sample s = reading(1);
    struct cond_device *d;

    cond_init(&c);
    d = mapped(&c, 0);
    for (int i = 0; i < COND_MAX_OTHERS + 5; i++)
        other(&s, 1000 + i, "w");
    cond_add_sample(d, &s, true);
    assert_int_equal(d->nothers, COND_MAX_OTHERS);
    assert_true(d->others_truncated);
    assert_int_equal(d->others_max, COND_MAX_OTHERS + 5);
}

/* Another process's name is any bytes it gave itself (PR_SET_NAME, /proc/PID/comm): in the
 * text's lines it is escaped as a kernel's name is, so that it can make no line (and no warning)
 * of its own nor a terminal sequence; the JSON's figures keep it as it is. */
static void others_named_with_control_characters(void **state)
{
    struct conditions c;
    struct cond_sample s = reading(1);
    struct cond_device *d;
    struct model m;
    char *t;

    cond_init(&c);
    c.checked = true;
    d = mapped(&c, 0);
    other(&s, 100, "x\nwarning: pwn");
    other(&s, 200, "\x1b[2J\\\t\x7f");
    cond_add_sample(d, &s, true);
    memset(&m, 0, sizeof m);
    assert_int_equal(model_cond_section(&m, &c, NULL, 0), 0);
    assert_int_equal(m.cond->ntext, 2); /* the device's line, and its warning */
    assert_string_equal(m.cond->text[0] + strcspn(m.cond->text[0], "("),
                        "(x\\nwarning: pwn pid 100, \\x1b[2J\\\\\\t\\x7f pid 200); clocks not "
                        "locked, SM clock 1980 MHz, memory clock 2619 MHz; no throttling; 40 C; "
                        "1 reading");
    assert_int_equal(m.cond->nwarnings, 1);
    assert_string_equal(m.cond->warnings[0], "gpu 0 was shared with 2 other processes during the "
                                             "run: its kernels' times include waiting for their "
                                             "work");
    model_free(&m);
    t = render(&c, NULL, 0, false);
    assert_null(strstr(t, "\nwarning: pwn"));
    assert_null(strchr(t, '\x1b'));
    assert_null(strchr(t, '\t'));
    free(t);
    t = render(&c, NULL, 0, true);
    assert_non_null(strstr(t, "{ \"pid\": 100, \"name\": \"x\\nwarning: pwn\", "));
    assert_non_null(strstr(t, "{ \"pid\": 200, \"name\": \"\\u001b[2J\\\\\\t\x7f\", "));
    free(t);
}

/* NVML's pids are the host's: ours is not among them and none resolves here. */
static void another_namespace(void **state)
{
    struct conditions c;
    struct cond_sample s = reading(1);
    struct cond_device *d;
    char *t;

    cond_init(&c);
    c.checked = true;
    d = mapped(&c, 0);
    s.self_listed = false;
    s.nprocs = 0;
    other(&s, 4242, ""); /* us, under another pid */
    other(&s, 4343, "");
    cond_add_sample(d, &s, true);
    assert_true(d->pid_mismatch);
    t = render(&c, NULL, 0, false);
    assert_non_null(strstr(t, "shared with 1 other process (pids of another pid namespace)"));
    free(t);
    t = render(&c, NULL, 0, true);
    assert_non_null(strstr(t, "\"other_processes\": null, \"other_process_count\": 1"));
    assert_non_null(strstr(t, "\"pids_of_another_namespace\": true"));
    free(t);
}

/* Our pid missing, but every other pid resolves: they are others, and counted as such. */
static void self_missing_names_resolve(void **state)
{
    struct conditions c;
    struct cond_sample s = reading(1);
    struct cond_device *d;

    cond_init(&c);
    d = mapped(&c, 0);
    s.self_listed = false;
    s.nprocs = 0;
    other(&s, 77, "spin");
    cond_add_sample(d, &s, true);
    assert_false(d->pid_mismatch);
    assert_int_equal(d->nothers, 1);
}

static void not_checked(void **state)
{
    struct conditions c;
    int ord[] = { 0, 3 };
    char *t;

    t = render(NULL, ord, 2, false);
    assert_string_equal(t, "conditions: not checked (no NVML)\n");
    free(t);
    cond_init(&c);
    snprintf(c.reason, sizeof c.reason, "KTIME_NVML=0");
    t = render(&c, ord, 2, false);
    assert_string_equal(t, "conditions: not checked (KTIME_NVML=0)\n");
    free(t);
    t = render(&c, ord, 2, true);
    assert_string_equal(t, "\"conditions\": { \"checked\": false, \"reason\": \"KTIME_NVML=0\", "
                           "\"text\": [\"conditions: not checked (KTIME_NVML=0)\"], \"devices\": [] }");
    free(t);
    /* Checked, but one device had no NVML device and the other was never read. */
    c.checked = true;
    struct cond_device *d = cond_device(&c, 0);
    snprintf(d->why, sizeof d->why, "no NVML device for its PCI bus id 0000:01:00.0");
    t = render(&c, ord, 2, false);
    assert_string_equal(t, "conditions: gpu 0 not checked (no NVML device for its PCI bus id 0000:01:00.0)\n"
                           "conditions: gpu 3 not checked (no NVML device found for it)\n");
    free(t);
    t = render(&c, ord, 2, true);
    assert_non_null(strstr(t, "{ \"ordinal\": 3, \"checked\": false, \"reason\": \"no NVML device found for it\", \"pci_bus_id\": null }"));
    free(t);
}

static void locked_and_mps(void **state)
{
    struct conditions c;
    struct cond_sample s = reading(1);
    struct cond_device *d;
    char *t;

    cond_init(&c);
    c.checked = true;
    c.mps = 1;
    snprintf(c.mps_evidence, sizeof c.mps_evidence, "an MPS control daemon's pipe, /tmp/x/control");
    d = mapped(&c, 0);
    d->app_sm_mhz = 1410;
    d->default_app_sm_mhz = 1980;
    d->persistence = 0;
    s.sm_mhz = 1410;
    cond_add_sample(d, &s, true);
    t = render(&c, NULL, 0, false);
    assert_non_null(strstr(t, "; clocks locked at 1410 MHz, SM clock 1410 MHz, "));
    assert_non_null(strstr(t, "; persistence mode off; 1 reading\n"));
    assert_non_null(strstr(t, "warning: this process ran under MPS (an MPS control daemon's pipe, /tmp/x/control)"));
    assert_non_null(strstr(t, "warning: gpu 0 has persistence mode off"));
    free(t);
    t = render(&c, NULL, 0, true);
    assert_non_null(strstr(t, "\"mps\": { \"checked\": true, \"active\": true, \"evidence\": \"an MPS control daemon's pipe, /tmp/x/control\" }"));
    assert_non_null(strstr(t, "\"locked\": true, \"locked_evidence\": \"application clocks set to 1410 MHz (default 1980 MHz)\""));
    assert_non_null(strstr(t, "\"persistence_mode\": false"));
    free(t);
}

static void device_table_full(void **state)
{
    struct conditions c;

    cond_init(&c);
    for (int i = 0; i < COND_MAX_DEVICES; i++)
        assert_non_null(cond_device(&c, i));
    assert_null(cond_device(&c, COND_MAX_DEVICES));
    assert_ptr_equal(cond_device(&c, 3), &c.dev[3]);
    assert_null(cond_find(&c, 99));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ranges),
        cmocka_unit_test(throttle_time),
        cmocka_unit_test(throttle_one_reading),
        cmocka_unit_test(others_over_the_run),
        cmocka_unit_test(more_others_than_kept),
        cmocka_unit_test(others_named_with_control_characters),
        cmocka_unit_test(another_namespace),
        cmocka_unit_test(self_missing_names_resolve),
        cmocka_unit_test(not_checked),
        cmocka_unit_test(locked_and_mps),
        cmocka_unit_test(device_table_full),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
