#include "core/trace.h"

#include <stdarg.h>
#include <stdio.h>

#ifdef GOLMPI_HAVE_NVTX
#include <nvtx3/nvToolsExt.h>
#include <sys/syscall.h>
#include <unistd.h>

/* One domain for the process, created once by trace_init before any thread starts. */
static nvtxDomainHandle_t trace_domain;

void trace_init(void) {
    if (!trace_domain) trace_domain = nvtxDomainCreateA("golmpi");
    trace_name_thread("main");
}

void trace_push(const char *name) {
    nvtxEventAttributes_t a = {0};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = name;
    nvtxDomainRangePushEx(trace_domain, &a);
}

void trace_pop(void) { nvtxDomainRangePop(trace_domain); }

void trace_name_thread(const char *name) { nvtxNameOsThreadA((uint32_t)syscall(SYS_gettid), name); }

#else
void trace_init(void) {}
void trace_push(const char *name) { (void)name; }
void trace_pop(void) {}
void trace_name_thread(const char *name) { (void)name; }
#endif

void trace_pushf(const char *fmt, ...) {
    char name[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    trace_push(name);
}
