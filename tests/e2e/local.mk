# tests/e2e/local.mk - end-to-end tests through a fake CUDA driver (included by Makefile.am).
#
# The fake driver tests/fake/libcuda.so.1 is built by every `make check`, so it cannot drift.
# The test scripts get KTIME_LIB, FAKE_DIR and E2E_BIN from AM_TESTS_ENVIRONMENT.

# ---------------------------------------------------------------- the fake driver
FAKE_CUDA = tests/fake/libcuda.so.1 tests/fake/libcuda.so
check_DATA += $(FAKE_CUDA)
CLEANFILES += $(FAKE_CUDA)
EXTRA_DIST += tests/fake/fakecuda.c tests/fake/README.md

tests/fake/libcuda.so.1: $(srcdir)/tests/fake/fakecuda.c
	@$(MKDIR_P) tests/fake
	$(AM_V_CC)$(CC) -shared -fPIC -O2 $(CUDA_CPPFLAGS) $(AM_CFLAGS) $(CFLAGS) -Wl,-soname,libcuda.so.1 \
		-o $@ $(srcdir)/tests/fake/fakecuda.c -lpthread -ldl
# A fake CUDA runtime, for programs linked with -lcudart (runtime entry points).
FAKE_CUDART = tests/fake/libcudart.so.13 tests/fake/libcudart.so
check_DATA += $(FAKE_CUDART)
CLEANFILES += $(FAKE_CUDART)
EXTRA_DIST += tests/fake/fakecudart.c

tests/fake/libcudart.so.13: $(srcdir)/tests/fake/fakecudart.c
	@$(MKDIR_P) tests/fake
	$(AM_V_CC)$(CC) -shared -fPIC -O2 $(CUDA_CPPFLAGS) $(AM_CFLAGS) $(CFLAGS) -Wl,-soname,libcudart.so.13 \
		-o $@ $(srcdir)/tests/fake/fakecudart.c -lpthread -ldl
tests/fake/libcudart.so: tests/fake/libcudart.so.13
	$(AM_V_GEN)rm -f $@ && ln -s libcudart.so.13 $@

# For linking with -lcuda.
tests/fake/libcuda.so: tests/fake/libcuda.so.1
	$(AM_V_GEN)rm -f $@ && ln -s libcuda.so.1 $@

# ---------------------------------------------------------------- RTLD_NEXT libraries
E2E_RTLD_LIBS = tests/e2e/librtldnext.so tests/e2e/librtldlater.so tests/e2e/libdlwrap.so
check_DATA += $(E2E_RTLD_LIBS)
CLEANFILES += $(E2E_RTLD_LIBS)

tests/e2e/librtldnext.so: $(srcdir)/tests/e2e/rtldnext.c
	@$(MKDIR_P) tests/e2e
	$(AM_V_CC)$(CC) -shared -fPIC $(AM_CFLAGS) $(CFLAGS) -Wl,-soname,librtldnext.so -o $@ \
		$(srcdir)/tests/e2e/rtldnext.c -ldl
tests/e2e/libdlwrap.so: $(srcdir)/tests/e2e/dlwrap.c
	@$(MKDIR_P) tests/e2e
	$(AM_V_CC)$(CC) -shared -fPIC $(AM_CFLAGS) $(CFLAGS) -Wl,-soname,libdlwrap.so -o $@ \
		$(srcdir)/tests/e2e/dlwrap.c -ldl
tests/e2e/librtldlater.so: $(srcdir)/tests/e2e/rtldlater.c
	@$(MKDIR_P) tests/e2e
	$(AM_V_CC)$(CC) -shared -fPIC $(AM_CFLAGS) $(CFLAGS) -Wl,-soname,librtldlater.so -o $@ \
		$(srcdir)/tests/e2e/rtldlater.c

# ---------------------------------------------------------------- test programs
E2E_APPS = \
	tests/e2e/jcheck \
	tests/e2e/promcheck \
	tests/e2e/fake_selftest \
	tests/e2e/app_cudart \
	tests/e2e/app_driver \
	tests/e2e/app_threads \
	tests/e2e/app_exit_thread \
	tests/e2e/app_capture \
	tests/e2e/app_fork \
	tests/e2e/app_nocuda \
	tests/e2e/app_fail \
	tests/e2e/app_rtld_next \
	tests/e2e/app_runtime \
	tests/e2e/app_probe \
	tests/e2e/app_forksig \
	tests/e2e/app_reset \
	tests/e2e/app_manyctx \
	tests/e2e/app_exit_launch \
	tests/e2e/app_memops \
	tests/e2e/app_signal \
	tests/e2e/app_stdio \
	tests/e2e/app_live
check_PROGRAMS += $(E2E_APPS)

E2E_APPUTIL = tests/e2e/apputil.c tests/e2e/apputil.h
E2E_CUDARTLIKE = $(E2E_APPUTIL) tests/e2e/cudartlike.c tests/e2e/cudartlike.h
E2E_LIBCUDA = -L$(top_builddir)/tests/fake -lcuda

tests_e2e_jcheck_SOURCES = tests/e2e/jcheck.c
tests_e2e_jcheck_LDADD = -lm
tests_e2e_promcheck_SOURCES = tests/e2e/promcheck.c

tests_e2e_fake_selftest_SOURCES = tests/e2e/fake_selftest.c
tests_e2e_fake_selftest_CPPFLAGS = $(CUDA_CPPFLAGS)
tests_e2e_fake_selftest_LDADD = $(E2E_LIBCUDA) -ldl -lpthread
EXTRA_tests_e2e_fake_selftest_DEPENDENCIES = $(FAKE_CUDA)

tests_e2e_app_cudart_SOURCES = tests/e2e/app_cudart.c $(E2E_APPUTIL)
tests_e2e_app_cudart_CPPFLAGS = $(CUDA_CPPFLAGS)
tests_e2e_app_cudart_LDADD = -ldl -lpthread

tests_e2e_app_memops_SOURCES = tests/e2e/app_memops.c $(E2E_APPUTIL)
tests_e2e_app_memops_CPPFLAGS = $(CUDA_CPPFLAGS)
tests_e2e_app_memops_LDADD = $(E2E_LIBCUDA) -ldl -lpthread
EXTRA_tests_e2e_app_memops_DEPENDENCIES = $(FAKE_CUDA)
tests_e2e_app_driver_SOURCES = tests/e2e/app_driver.c $(E2E_APPUTIL)
tests_e2e_app_driver_CPPFLAGS = $(CUDA_CPPFLAGS)
tests_e2e_app_driver_LDADD = $(E2E_LIBCUDA) -ldl -lpthread
EXTRA_tests_e2e_app_driver_DEPENDENCIES = $(FAKE_CUDA)

tests_e2e_app_threads_SOURCES = tests/e2e/app_threads.c $(E2E_CUDARTLIKE)
tests_e2e_app_threads_CPPFLAGS = $(CUDA_CPPFLAGS)
tests_e2e_app_threads_LDADD = -ldl -lpthread

tests_e2e_app_exit_thread_SOURCES = tests/e2e/app_exit_thread.c $(E2E_CUDARTLIKE)
tests_e2e_app_exit_thread_CPPFLAGS = $(CUDA_CPPFLAGS)
tests_e2e_app_exit_thread_LDADD = -ldl -lpthread

tests_e2e_app_capture_SOURCES = tests/e2e/app_capture.c $(E2E_CUDARTLIKE)
tests_e2e_app_capture_CPPFLAGS = $(CUDA_CPPFLAGS)
tests_e2e_app_capture_LDADD = -ldl -lpthread

tests_e2e_app_fork_SOURCES = tests/e2e/app_fork.c $(E2E_CUDARTLIKE)
tests_e2e_app_fork_CPPFLAGS = $(CUDA_CPPFLAGS)
tests_e2e_app_fork_LDADD = -ldl -lpthread

tests_e2e_app_nocuda_SOURCES = tests/e2e/app_nocuda.c
tests_e2e_app_nocuda_LDADD = -ldl

tests_e2e_app_fail_SOURCES = tests/e2e/app_fail.c $(E2E_CUDARTLIKE)
tests_e2e_app_fail_CPPFLAGS = $(CUDA_CPPFLAGS)
tests_e2e_app_fail_LDADD = -ldl -lpthread

tests_e2e_app_runtime_SOURCES = tests/e2e/app_runtime.c $(E2E_APPUTIL)
tests_e2e_app_runtime_CPPFLAGS = $(CUDA_CPPFLAGS)
tests_e2e_app_runtime_LDADD = -L$(top_builddir)/tests/fake -lcudart $(E2E_LIBCUDA) -ldl -lpthread
EXTRA_tests_e2e_app_runtime_DEPENDENCIES = $(FAKE_CUDA) $(FAKE_CUDART)

tests_e2e_app_signal_SOURCES = tests/e2e/app_signal.c $(E2E_CUDARTLIKE)
tests_e2e_app_signal_CPPFLAGS = $(CUDA_CPPFLAGS)
tests_e2e_app_signal_LDADD = -ldl -lpthread
tests_e2e_app_live_SOURCES = tests/e2e/app_live.c $(E2E_CUDARTLIKE)
tests_e2e_app_live_CPPFLAGS = $(CUDA_CPPFLAGS)
tests_e2e_app_live_LDADD = -ldl

tests_e2e_app_forksig_SOURCES = tests/e2e/app_forksig.c $(E2E_CUDARTLIKE)
tests_e2e_app_forksig_CPPFLAGS = $(CUDA_CPPFLAGS)
tests_e2e_app_forksig_LDADD = -ldl -lpthread

tests_e2e_app_reset_SOURCES = tests/e2e/app_reset.c $(E2E_CUDARTLIKE)
tests_e2e_app_reset_CPPFLAGS = $(CUDA_CPPFLAGS)
tests_e2e_app_reset_LDADD = -ldl -lpthread

tests_e2e_app_manyctx_SOURCES = tests/e2e/app_manyctx.c $(E2E_CUDARTLIKE)
tests_e2e_app_manyctx_CPPFLAGS = $(CUDA_CPPFLAGS)
tests_e2e_app_manyctx_LDADD = -ldl -lpthread

tests_e2e_app_exit_launch_SOURCES = tests/e2e/app_exit_launch.c $(E2E_CUDARTLIKE)
tests_e2e_app_exit_launch_CPPFLAGS = $(CUDA_CPPFLAGS)
tests_e2e_app_exit_launch_LDADD = -ldl -lpthread

tests_e2e_app_stdio_SOURCES = tests/e2e/app_stdio.c $(E2E_CUDARTLIKE)
tests_e2e_app_stdio_CPPFLAGS = $(CUDA_CPPFLAGS)
tests_e2e_app_stdio_LDADD = -ldl -lpthread

tests_e2e_app_probe_SOURCES = tests/e2e/app_probe.c
tests_e2e_app_probe_LDADD = -ldl

# librtldnext must come before librtldlater in the search order: the app calls a function of
# each, so both stay needed even under --as-needed, in this order.
tests_e2e_app_rtld_next_SOURCES = tests/e2e/app_rtld_next.c
tests_e2e_app_rtld_next_LDADD = -L$(top_builddir)/tests/e2e -lrtldnext -lrtldlater -ldl
EXTRA_tests_e2e_app_rtld_next_DEPENDENCIES = $(E2E_RTLD_LIBS)

# ---------------------------------------------------------------- TAP scripts
E2E_TESTS = \
	tests/e2e/fake.sh \
	tests/e2e/counts.sh \
	tests/e2e/quantiles.sh \
	tests/e2e/shapes.sh \
	tests/e2e/trace.sh \
	tests/e2e/warmup.sh \
	tests/e2e/threads.sh \
	tests/e2e/pool.sh \
	tests/e2e/exit.sh \
	tests/e2e/env.sh \
	tests/e2e/capture.sh \
	tests/e2e/fork.sh \
	tests/e2e/tree.sh \
	tests/e2e/transparency.sh \
	tests/e2e/fail.sh \
	tests/e2e/names.sh \
	tests/e2e/gate.sh \
	tests/e2e/runtime.sh \
	tests/e2e/signal.sh \
	tests/e2e/signal_runs.sh \
	tests/e2e/tools.sh \
	tests/e2e/output.sh \
	tests/e2e/capture_warmup.sh \
	tests/e2e/shutdown.sh \
	tests/e2e/gate_idle.sh \
	tests/e2e/gate_memory.sh \
	tests/e2e/launcher.sh \
	tests/e2e/settings.sh \
	tests/e2e/install.sh \
	tests/e2e/silent.sh \
	tests/e2e/streams.sh \
	tests/e2e/capture_range.sh \
	tests/e2e/flush.sh \
	tests/e2e/memops.sh \
	tests/e2e/ranges.sh \
	tests/e2e/where.sh \
	tests/e2e/ktool.sh \
	tests/e2e/job.sh \
	tests/e2e/messages.sh \
	tests/e2e/trydemo.sh \
	tests/e2e/docs.sh \
	tests/e2e/doclinks.sh \
	tests/e2e/examples.sh \
	tests/e2e/live.sh \
	tests/e2e/ctl.sh
TESTS += $(E2E_TESTS)
# Run by tools/test.sh (make check TESTS=tests/e2e/pip.sh), not by every make check: it builds
# ktime once more, as pip does.
EXTRA_DIST += tests/e2e/pip.sh
EXTRA_DIST += $(E2E_TESTS) tests/e2e/doclinks.py tests/e2e/lib.sh tests/e2e/ktool_malformed.py tests/e2e/README.md tests/e2e/rtldnext.c tests/e2e/rtldlater.c tests/e2e/dlwrap.c

# ---------------------------------------------------------------- the fake CUPTI
# libcupti.so.13: the fake driver's kernels as CUPTI activity records (tests/fake/README.md,
# "The fake CUPTI"); both fakes share fakecuda_activity.h. cupti.sh checks its contract with
# cupti_selftest, and runs tests/gpu/kcount.c (the GPU tests' CUPTI kernel counter) against it.
FAKE_CUPTI = tests/fake/libcupti.so.13 tests/fake/libcupti.so
check_DATA += $(FAKE_CUPTI) tests/e2e/libkcount.so
CLEANFILES += $(FAKE_CUPTI) tests/e2e/libkcount.so
EXTRA_DIST += tests/fake/fakecupti.c tests/fake/fakecuda_activity.h tests/e2e/cupti.sh

tests/fake/libcuda.so.1: $(srcdir)/tests/fake/fakecuda_activity.h
tests/fake/libcupti.so.13: $(srcdir)/tests/fake/fakecupti.c $(srcdir)/tests/fake/fakecuda_activity.h
	@$(MKDIR_P) tests/fake
	$(AM_V_CC)$(CC) -shared -fPIC -O2 -fvisibility=hidden $(CUDA_CPPFLAGS) $(AM_CFLAGS) $(CFLAGS) \
		-Wl,-soname,libcupti.so.13 -o $@ $(srcdir)/tests/fake/fakecupti.c -lpthread -ldl
tests/fake/libcupti.so: tests/fake/libcupti.so.13
	$(AM_V_GEN)rm -f $@ && ln -s libcupti.so.13 $@

# kcount is built with nvcc's host compiler on the GPU machine; it is plain C against cupti.h.
tests/e2e/libkcount.so: $(srcdir)/tests/gpu/kcount.c $(FAKE_CUPTI)
	@$(MKDIR_P) tests/e2e
	$(AM_V_CC)$(CC) -shared -fPIC $(CUDA_CPPFLAGS) $(AM_CFLAGS) $(CFLAGS) -o $@ $(srcdir)/tests/gpu/kcount.c \
		-L$(top_builddir)/tests/fake -lcupti -lpthread

check_PROGRAMS += tests/e2e/cupti_selftest
tests_e2e_cupti_selftest_SOURCES = tests/e2e/cupti_selftest.c
tests_e2e_cupti_selftest_CPPFLAGS = $(CUDA_CPPFLAGS)
tests_e2e_cupti_selftest_LDADD = -L$(top_builddir)/tests/fake -lcupti $(E2E_LIBCUDA) -ldl -lpthread
EXTRA_tests_e2e_cupti_selftest_DEPENDENCIES = $(FAKE_CUDA) $(FAKE_CUPTI)

TESTS += tests/e2e/cupti.sh

# The CUPTI timer (KTIME_TIMER=cupti|both) and KTIME_SAMPLE, with the fake CUPTI.
check_PROGRAMS += tests/e2e/app_cupti_client
tests_e2e_app_cupti_client_SOURCES = tests/e2e/app_cupti_client.c $(E2E_APPUTIL)
tests_e2e_app_cupti_client_CPPFLAGS = $(CUDA_CPPFLAGS)
tests_e2e_app_cupti_client_LDADD = -L$(top_builddir)/tests/fake -lcupti $(E2E_LIBCUDA) -ldl -lpthread
EXTRA_tests_e2e_app_cupti_client_DEPENDENCIES = $(FAKE_CUDA) $(FAKE_CUPTI)
TESTS += tests/e2e/timer.sh
EXTRA_DIST += tests/e2e/timer.sh

# Shared by the two fakes / the two self-tests.
EXTRA_DIST += tests/fake/fakeutil.h tests/e2e/selfcheck.h
tests/fake/libcuda.so.1 tests/fake/libcupti.so.13: $(srcdir)/tests/fake/fakeutil.h

# ---------------------------------------------------------------- the timer API (include/ktime.h)
# Programs linked with -lktime and, but for app_api_nodrv, the fake driver; the example of the
# API in tools/example. They are linked by the compiler, not libtool (which would make them
# wrapper scripts around the uninstalled library): api.sh puts the folder of libktime.so on
# LD_LIBRARY_PATH. api.sh runs them with and without libktime preloaded.
E2E_KTIME_LINK = -L$(top_builddir)/src/.libs -lktime
E2E_PLAIN_LINK = $(CCLD) $(AM_CFLAGS) $(CFLAGS) $(AM_LDFLAGS) $(LDFLAGS) -o $@
check_PROGRAMS += tests/e2e/app_api tests/e2e/app_api_nodrv tools/example/timer_example \
	tests/e2e/app_ranges
tests_e2e_app_api_SOURCES = tests/e2e/app_api.c tests/e2e/selfcheck.h
tests_e2e_app_api_CPPFLAGS = $(AM_CPPFLAGS) $(CUDA_CPPFLAGS)
tests_e2e_app_api_LDADD = $(E2E_KTIME_LINK) $(E2E_LIBCUDA) -lm
EXTRA_tests_e2e_app_api_DEPENDENCIES = src/libktime.la $(FAKE_CUDA)
tests_e2e_app_api_LINK = $(E2E_PLAIN_LINK)
tests_e2e_app_ranges_SOURCES = tests/e2e/app_ranges.c
tests_e2e_app_ranges_CPPFLAGS = $(AM_CPPFLAGS) $(CUDA_CPPFLAGS)
tests_e2e_app_ranges_LDADD = -L$(top_builddir)/tests/fake -lcudart $(E2E_KTIME_LINK) $(E2E_LIBCUDA) -ldl
EXTRA_tests_e2e_app_ranges_DEPENDENCIES = src/libktime.la $(FAKE_CUDA) $(FAKE_CUDART)
tests_e2e_app_ranges_LINK = $(E2E_PLAIN_LINK)
tests_e2e_app_api_nodrv_SOURCES = tests/e2e/app_api_nodrv.c tests/e2e/selfcheck.h
tests_e2e_app_api_nodrv_CPPFLAGS = $(AM_CPPFLAGS) $(CUDA_CPPFLAGS)
tests_e2e_app_api_nodrv_LDADD = $(E2E_KTIME_LINK) -ldl
EXTRA_tests_e2e_app_api_nodrv_DEPENDENCIES = src/libktime.la
tests_e2e_app_api_nodrv_LINK = $(E2E_PLAIN_LINK)
tools_example_timer_example_SOURCES = tools/example/timer_example.c
tools_example_timer_example_CPPFLAGS = $(AM_CPPFLAGS) $(CUDA_CPPFLAGS)
tools_example_timer_example_LDADD = $(E2E_KTIME_LINK) $(E2E_LIBCUDA)
EXTRA_tools_example_timer_example_DEPENDENCIES = src/libktime.la $(FAKE_CUDA)
tools_example_timer_example_LINK = $(E2E_PLAIN_LINK)
TESTS += tests/e2e/api.sh
EXTRA_DIST += tests/e2e/api.sh
# ---------------------------------------------------------------- the fake NVML
# libnvidia-ml.so.1: devices matching the fake driver's (by PCI bus id, in the opposite order),
# other processes, clocks, throttle reasons and failures set by FAKE_NVML_* (tests/fake/README.md,
# "The fake NVML"). In a folder of its own, off the tests' library path: only conditions.sh
# loads it (KTIME_NVML_LIB); every other test runs with no NVML.
FAKE_NVML = tests/fake/nvml/libnvidia-ml.so.1
check_DATA += $(FAKE_NVML)
CLEANFILES += $(FAKE_NVML)
EXTRA_DIST += tests/fake/fakenvml.c tests/e2e/conditions.sh
tests/fake/nvml/libnvidia-ml.so.1: $(srcdir)/tests/fake/fakenvml.c
	@$(MKDIR_P) tests/fake/nvml
	$(AM_V_CC)$(CC) -shared -fPIC -O2 -fvisibility=hidden $(AM_CFLAGS) $(CFLAGS) \
		-Wl,-soname,libnvidia-ml.so.1 -o $@ $(srcdir)/tests/fake/fakenvml.c -lpthread
TESTS += tests/e2e/conditions.sh

# KTIME_BUDGET: each kernel's sampling chosen to keep ktime's estimated cost under a budget.
TESTS += tests/e2e/budget.sh
EXTRA_DIST += tests/e2e/budget.sh
