# tests/fuzz/local.mk - the fuzz targets (included by Makefile.am; built with --enable-fuzz).
#
# Each target links the core files it exercises, compiled again with FUZZ_CFLAGS, and
# fuzzutil.c (which stands in for src/base/log.c: messages are counted, not printed). Without
# libFuzzer, driver.c is the main program. tests/fuzz/fuzz.sh runs them (README there).

EXTRA_DIST += tests/fuzz/README.md tests/fuzz/fuzz.sh tests/fuzz/corpus tests/fuzz/local.mk \
	tests/fuzz/driver.c tests/fuzz/fuzzutil.c tests/fuzz/fuzzutil.h \
	tests/fuzz/fuzz_config.c tests/fuzz/fuzz_outpath.c tests/fuzz/fuzz_names.c \
	tests/fuzz/fuzz_json.c tests/fuzz/fuzz_nvversion.c tests/fuzz/fuzz_read.c

if ENABLE_FUZZ
check_PROGRAMS += tests/fuzz/fuzz_config tests/fuzz/fuzz_outpath tests/fuzz/fuzz_names \
	tests/fuzz/fuzz_json tests/fuzz/fuzz_nvversion tests/fuzz/fuzz_read
TESTS += tests/fuzz/fuzz.sh

FUZZ_ALL_CFLAGS = $(AM_CFLAGS) $(FUZZ_CFLAGS) -g
FUZZ_ALL_LDADD = -lm $(FUZZ_CFLAGS)
FUZZ_SUPPORT = tests/fuzz/fuzzutil.c tests/fuzz/fuzzutil.h
if FUZZ_DRIVER
FUZZ_SUPPORT += tests/fuzz/driver.c
endif

tests_fuzz_fuzz_config_SOURCES = tests/fuzz/fuzz_config.c $(FUZZ_SUPPORT) src/core/config.c
tests_fuzz_fuzz_config_CFLAGS = $(FUZZ_ALL_CFLAGS)
tests_fuzz_fuzz_config_LDADD = $(FUZZ_ALL_LDADD)

tests_fuzz_fuzz_outpath_SOURCES = tests/fuzz/fuzz_outpath.c $(FUZZ_SUPPORT) src/core/outpath.c
tests_fuzz_fuzz_outpath_CFLAGS = $(FUZZ_ALL_CFLAGS)
tests_fuzz_fuzz_outpath_LDADD = $(FUZZ_ALL_LDADD)

tests_fuzz_fuzz_names_SOURCES = tests/fuzz/fuzz_names.c $(FUZZ_SUPPORT) src/core/sysinfo.c \
	src/base/mangled.c src/base/mangled_type.c src/base/mangled_expr.c src/report/names.c src/base/jsonout.c src/base/dl.c
tests_fuzz_fuzz_names_CFLAGS = $(FUZZ_ALL_CFLAGS)
tests_fuzz_fuzz_names_LDADD = $(FUZZ_ALL_LDADD)

tests_fuzz_fuzz_json_SOURCES = tests/fuzz/fuzz_json.c $(FUZZ_SUPPORT) $(REPORT_SOURCES) \
	src/base/stats.c src/base/sketch.c src/base/shape.c src/base/jsonout.c
tests_fuzz_fuzz_json_CFLAGS = $(FUZZ_ALL_CFLAGS)
tests_fuzz_fuzz_json_LDADD = $(FUZZ_ALL_LDADD)

tests_fuzz_fuzz_read_SOURCES = tests/fuzz/fuzz_read.c $(FUZZ_SUPPORT) $(REPORT_SOURCES) \
	$(READER_SOURCES) src/base/stats.c src/base/sketch.c src/base/shape.c src/base/jsonout.c
tests_fuzz_fuzz_read_CFLAGS = $(FUZZ_ALL_CFLAGS)
tests_fuzz_fuzz_read_LDADD = $(FUZZ_ALL_LDADD)

tests_fuzz_fuzz_nvversion_SOURCES = tests/fuzz/fuzz_nvversion.c $(FUZZ_SUPPORT) src/core/sysinfo.c \
	src/base/mangled.c src/base/mangled_type.c src/base/mangled_expr.c src/base/dl.c
tests_fuzz_fuzz_nvversion_CFLAGS = $(FUZZ_ALL_CFLAGS)
tests_fuzz_fuzz_nvversion_LDADD = $(FUZZ_ALL_LDADD)
endif
