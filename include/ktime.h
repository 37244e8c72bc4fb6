/* ktime.h - the public interface of libktime.
 *
 * ktime needs no code in the program it measures: LD_PRELOAD=libktime.so ./app.
 * This header is for programs and tools that want to know whether ktime is loaded.
 */
#ifndef KTIME_H
#define KTIME_H

#ifdef __cplusplus
extern "C" {
#endif

/* The version of the loaded libktime, e.g. "0.1.0". Call it through
 * dlsym(RTLD_DEFAULT, "ktime_version") to test whether ktime is preloaded. */
const char *ktime_version(void);

#ifdef __cplusplus
}
#endif

#endif
