/* nvtx.c - libktime as an NVTX tool: NVTX v3 (header-only, in the program or a library such as
 * PyTorch's) and libnvToolsExt load the library named by NVTX_INJECTION64_PATH and call its
 * InitializeInjectionNvtx2; ktime then receives the range pushes and pops (of every domain) and
 * keeps the program's ranges (rangestack.h), to which each timed launch is attributed. The ktime
 * launcher sets the variable (KTIME_NVTX=1 has libktime set it itself); one already set (Nsight
 * Systems') is left alone. Also: ktime_range_push/pop of include/ktime.h. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE, PACKAGE_VERSION */

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include "ktime.h"
#include "lifecycle.h"
#include "nvml.h"
#include "rangestack.h"
#include "state.h"


/* Ranges are kept while ktime times (or writes its report); otherwise a push costs a load. */
static inline bool ranges_on(void)
{
    int phase = atomic_load_explicit(&kt.phase, memory_order_relaxed);

    return phase == PHASE_ON || phase == PHASE_EXITING;
}

/* A wide name as UTF-8 (wchar_t is UTF-32 here), cut at 255 bytes. */
static void utf8_of(const wchar_t *w, char *out, size_t size)
{
    size_t n = 0;

    for (; w && *w && n + 5 < size; w++) {
        uint32_t c = (uint32_t)*w;
        if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
            c = 0xFFFD;
        if (c < 0x80) {
            out[n++] = (char)c;
        } else if (c < 0x800) {
            out[n++] = (char)(0xC0 | c >> 6);
            out[n++] = (char)(0x80 | (c & 0x3F));
        } else if (c < 0x10000) {
            out[n++] = (char)(0xE0 | c >> 12);
            out[n++] = (char)(0x80 | (c >> 6 & 0x3F));
            out[n++] = (char)(0x80 | (c & 0x3F));
        } else {
            out[n++] = (char)(0xF0 | c >> 18);
            out[n++] = (char)(0x80 | (c >> 12 & 0x3F));
            out[n++] = (char)(0x80 | (c >> 6 & 0x3F));
            out[n++] = (char)(0x80 | (c & 0x3F));
        }
    }
    out[n] = '\0';
}

static uint32_t id_of_wide(const wchar_t *w)
{
    char buf[256];

    utf8_of(w, buf, sizeof buf);
    return range_intern(buf);
}

/* The range id of an event's message: registered strings are handles ktime gave out (ids). */
static uint32_t id_of_attr(const nvtxEventAttributes_t *a)
{
    if (!a)
        return range_intern(NULL);
    switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII:
        return range_intern(a->message.ascii);
    case NVTX_MESSAGE_TYPE_UNICODE:
        return id_of_wide(a->message.unicode);
    case NVTX_MESSAGE_TYPE_REGISTERED:
        return (uint32_t)(uintptr_t)a->message.registered;
    default:
        return range_intern(NULL);
    }
}

static int NVTX_API push_a(const char *message)
{
    if (ranges_on())
        range_push_id(range_intern(message));
    return 0;
}

static int NVTX_API push_w(const wchar_t *message)
{
    if (ranges_on())
        range_push_id(id_of_wide(message));
    return 0;
}

static int NVTX_API push_ex(const nvtxEventAttributes_t *a)
{
    if (ranges_on())
        range_push_id(id_of_attr(a));
    return 0;
}

static int NVTX_API pop(void)
{
    if (ranges_on()) {
        range_pop();
        nvml_ranges_closed();
    }
    return 0;
}

static int NVTX_API domain_push_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    (void)d;
    return push_ex(a);
}

static int NVTX_API domain_pop(nvtxDomainHandle_t d)
{
    (void)d;
    return pop();
}

static nvtxStringHandle_t NVTX_API register_a(nvtxDomainHandle_t d, const char *s)
{
    (void)d;
    return (nvtxStringHandle_t)(uintptr_t)range_intern(s);
}

static nvtxStringHandle_t NVTX_API register_w(nvtxDomainHandle_t d, const wchar_t *s)
{
    (void)d;
    return (nvtxStringHandle_t)(uintptr_t)id_of_wide(s);
}

static void set(NvtxFunctionTable t, unsigned int n, unsigned int id, NvtxFunctionPointer fn)
{
    if (t && id < n && t[id])
        *t[id] = fn;
}

/* NVTX's loader calls this once, from the program's first NVTX call. Returns 1 when ktime
 * took the calls (0: NVTX stays a no-op, as without a tool). */
KTIME_EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get)
{
    const NvtxExportTableCallbacks *cb;
    const NvtxExportTableVersionInfo *vi;
    NvtxFunctionTable t = NULL;
    unsigned int n = 0;

    if (!get || !(cb = get(NVTX_ETID_CALLBACKS)) || cb->struct_size < sizeof *cb ||
        !cb->GetModuleFunctionTable || !cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &t, &n))
        return 0;
    if ((vi = get(NVTX_ETID_VERSIONINFO)) && vi->struct_size >= sizeof *vi &&
        vi->SetInjectionNvtxVersion)
        vi->SetInjectionNvtxVersion(NVTX_VERSION);
    set(t, n, NVTX_CBID_CORE_RangePushA, (NvtxFunctionPointer)push_a);
    set(t, n, NVTX_CBID_CORE_RangePushW, (NvtxFunctionPointer)push_w);
    set(t, n, NVTX_CBID_CORE_RangePushEx, (NvtxFunctionPointer)push_ex);
    set(t, n, NVTX_CBID_CORE_RangePop, (NvtxFunctionPointer)pop);
    t = NULL;
    n = 0;
    if (cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &t, &n)) {
        set(t, n, NVTX_CBID_CORE2_DomainRangePushEx, (NvtxFunctionPointer)domain_push_ex);
        set(t, n, NVTX_CBID_CORE2_DomainRangePop, (NvtxFunctionPointer)domain_pop);
        set(t, n, NVTX_CBID_CORE2_DomainRegisterStringA, (NvtxFunctionPointer)register_a);
        set(t, n, NVTX_CBID_CORE2_DomainRegisterStringW, (NvtxFunctionPointer)register_w);
    }
    range_note_nvtx_tool();
    return 1;
}

KTIME_EXPORT void ktime_range_push(const char *name)
{
    if (ranges_on())
        range_push_id(range_intern(name));
}

KTIME_EXPORT void ktime_range_pop(void)
{
    if (ranges_on()) {
        range_pop();
        nvml_ranges_closed();
    }
}
