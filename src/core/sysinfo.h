/* sysinfo.h - facts about the process and the machine that the report prints: the command
 * line, the NVIDIA kernel module's version, demangled kernel names. No CUDA. */
#ifndef KTIME_SYSINFO_H
#define KTIME_SYSINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Reads /proc/self/cmdline into buf (size bytes) and points argv[0..max-1] at its
 * arguments. Returns the number of arguments (0 when it cannot be read). */
int sysinfo_cmdline(char *buf, size_t size, const char **argv, int max);

/* Finds the driver version in the first line of /proc/driver/nvidia/version, in either
 * form the NVIDIA module writes it:
 *   NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.95.05  Tue Sep 23 ...
 *   NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build ...
 * The version is the first word made of digits and dots that has at least one dot.
 * Writes it into out (size bytes) and returns 0, or writes "" and returns -1. */
int sysinfo_parse_nvidia_version(const char *line, char *out, size_t size);

/* The NVIDIA kernel module's version, read from path (NULL: /proc/driver/nvidia/version).
 * Writes "" when it cannot be read or parsed. */
void sysinfo_nvidia_version(const char *path, char *out, size_t size);

/* Names longer than this are not demangled: libstdc++'s demangler refuses them itself (its
 * recursion limit), and older ones put arrays of the name's size on the caller's stack. */
#define SYSINFO_DEMANGLE_MAX_MANGLED 1024
/* Nor one whose demangled form may be longer than this (mangled_bound) ... */
#define SYSINFO_DEMANGLE_MAX_OUT (256u * 1024)
/* ... nor once the names demangled in this process add up to this many bytes. */
#define SYSINFO_DEMANGLE_BUDGET ((uint64_t)64 * 1024 * 1024)

/* Returns a malloc'd demangled copy of a C++ symbol, or NULL when it is not one, no demangler
 * is in the process (libstdc++ is loaded for it if needed), or its demangling is not surely
 * within the limits above (mangled.h bounds it from the mangled name before the demangler is
 * called): the caller shows the mangled name then. Its time and memory are thus bounded by
 * the name. Any thread. */
char *sysinfo_demangle(const char *mangled);

/* Whether the process whose /proc/PID/maps is at maps_path (NULL: this process's parent's)
 * has a file mapped whose path contains needle: a library of that name loaded. False when
 * it cannot be read. Reads a file: at start-up or exit only. */
bool sysinfo_maps_have(const char *maps_path, const char *needle);

/* Whether this process's parent has libktime loaded too (its file name in the parent's
 * /proc/PID/maps): then this process is one of a tree ktime is already in (a shell script's
 * child, say), and says less. At start-up or exit only. */
bool ktime_parent_has_ktime(void);

/* When the tree of processes ktime is in started, in seconds since the Epoch: the start of
 * the eldest of the unbroken chain of ancestors that have libktime loaded, or of this process
 * (its fork: an exec keeps it) when its parent has none; to within the clock's tick (10 ms,
 * rounded up). -1 when /proc cannot tell. Reads files: at exit only. */
double sysinfo_tree_start(void);

#endif
