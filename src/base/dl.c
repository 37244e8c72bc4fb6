/* dl.c - libc's dlsym, for ktime's own lookups (dl.h). */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */
#include "dl.h"

#include <dlfcn.h>
#include <stddef.h>

static dlsym_fn real_dlsym_ptr;

KTIME_NO_SAN dlsym_fn dl_real_dlsym(void)
{
    dlsym_fn f = __atomic_load_n(&real_dlsym_ptr, __ATOMIC_ACQUIRE);

    if (!f) {
        f = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
        if (!f)
            f = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
        __atomic_store_n(&real_dlsym_ptr, f, __ATOMIC_RELEASE);
    }
    return f;
}

KTIME_NO_SAN void *dl_sym(void *handle, const char *name)
{
    dlsym_fn f = dl_real_dlsym();

    return f && name ? f(handle, name) : NULL;
}
