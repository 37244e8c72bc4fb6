/* devices.c - the report's devices: each device ktime timed on, named once. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */

#include <stdio.h>

#include "driver.h"
#include "state.h"
#include "sysinfo.h"

void ktime_note_device(CUdevice dev)
{
    int n = atomic_load(&kt.ndevices);
    struct report_device *d;

    for (int i = 0; i < n; i++)
        if (kt.devices[i].ordinal == (int)dev)
            return;
    if (n >= KTIME_MAX_DEVICES)
        return;
    d = &kt.devices[n];
    d->ordinal = (int)dev;
    if (drv.DeviceGetName(d->name, (int)sizeof d->name, dev) != CUDA_SUCCESS)
        snprintf(d->name, sizeof d->name, "unknown");
    d->uuid[0] = '\0';
    CUuuid u;
    if (drv.DeviceGetUuid && drv.DeviceGetUuid(&u, dev) == CUDA_SUCCESS) {
        const unsigned char *b = (const unsigned char *)u.bytes;
        snprintf(d->uuid, sizeof d->uuid,
                 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                 b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                 b[14], b[15]);
    }
    if (drv.DriverGetVersion(&d->driver_version) != CUDA_SUCCESS)
        d->driver_version = 0;
    sysinfo_nvidia_version(NULL, d->driver, sizeof d->driver);
    atomic_store(&kt.ndevices, n + 1);
}
