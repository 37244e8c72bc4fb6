/* dl.h - ktime's own symbol lookups. libktime exports a dlsym of its own (the interposition
 * layer's, which hands out wrappers); ktime's internal lookups (libcupti, NVML, the
 * demangler) must never go through it, so they use libc's dlsym from here. No CUDA. */
#ifndef KTIME_DL_H
#define KTIME_DL_H

/* dlsym runs inside sanitizer runtimes' own start-up (they look up the functions they
 * intercept, before their shadow memory exists): no instrumentation there, in a
 * ThreadSanitizer or AddressSanitizer build of libktime. */
#define KTIME_NO_SAN __attribute__((no_sanitize("thread", "address")))

typedef void *(*dlsym_fn)(void *, const char *);

/* libc's (or libdl's) dlsym, found with dlvsym (which nobody interposes), or NULL. Any
 * thread; lock-free. */
dlsym_fn dl_real_dlsym(void);

/* libc's dlsym(handle, name) (RTLD_DEFAULT and RTLD_NEXT as libc means them, seen from
 * libktime), or NULL. Any thread. */
void *dl_sym(void *handle, const char *name);

#endif
