/* A minimal NVTX injection library for tests: loaded by the NVTX3 headers of the program under test
 * when NVTX_INJECTION64_PATH names it, it logs every domain, range and naming call, one line per
 * event, to a file per process. tests/test_nvtx.py reads the files and checks golmpi's ranges.
 *
 * File: $GOLMPI_NVTX_LOG.rank<R> when OMPI_COMM_WORLD_RANK, PMIX_RANK or SLURM_PROCID gives the
 * rank, else $GOLMPI_NVTX_LOG.pid<P>.
 *
 * Lines, tab separated, the OS thread id first:
 *   <tid> domain_create <domain>
 *   <tid> push <domain> <message>        (domain "-" for the global nvtxRangePush*)
 *   <tid> pop <domain>
 *   <tid> mark <domain> <message>
 *   <tid> name_thread <thread id> <name>
 *   <tid> name_stream <stream pointer> <name>
 *   <tid> name_category <domain> <id> <name> */
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <nvtx3/nvToolsExt.h>

/* A domain handle is a pointer to one of these; the NVTX API treats it as opaque. */
typedef struct inject_domain {
    char name[128];
} inject_domain;

typedef struct inject_string {
    char text[256];
} inject_string;

/* NVTX calls into the injection through plain function pointers with no user data, so the log
 * state has to live at file scope. */
static FILE *log_file;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

static void log_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void log_line(const char *fmt, ...) {
    if (!log_file) return;
    va_list ap;
    pthread_mutex_lock(&log_lock);
    fprintf(log_file, "%ld\t", (long)syscall(SYS_gettid));
    va_start(ap, fmt);
    vfprintf(log_file, fmt, ap);
    va_end(ap);
    fputc('\n', log_file);
    /* flushed per line: a rank that aborts still leaves what it logged */
    fflush(log_file);
    pthread_mutex_unlock(&log_lock);
}

static const char *domain_name(nvtxDomainHandle_t d) {
    return d ? ((const inject_domain *)(const void *)d)->name : "-";
}

/* The message of an event as text; Unicode messages are not used by golmpi and show as such. */
static const char *event_message(const nvtxEventAttributes_t *a) {
    if (!a) return "<null>";
    switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII: return a->message.ascii ? a->message.ascii : "<null>";
    case NVTX_MESSAGE_TYPE_REGISTERED:
        return a->message.registered ? ((const inject_string *)(const void *)a->message.registered)->text
                                     : "<null>";
    case NVTX_MESSAGE_TYPE_UNICODE: return "<unicode>";
    default: return "<none>";
    }
}

static nvtxDomainHandle_t NVTX_API on_domain_create(const char *name) {
    inject_domain *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    snprintf(d->name, sizeof d->name, "%s", name ? name : "<null>");
    log_line("domain_create\t%s", d->name);
    return (nvtxDomainHandle_t)(void *)d;
}

static void NVTX_API on_domain_destroy(nvtxDomainHandle_t d) {
    log_line("domain_destroy\t%s", domain_name(d));
    /* not freed: a late event on another thread may still name it */
}

static nvtxStringHandle_t NVTX_API on_register_string(nvtxDomainHandle_t d, const char *text) {
    (void)d;
    inject_string *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    snprintf(s->text, sizeof s->text, "%s", text ? text : "<null>");
    return (nvtxStringHandle_t)(void *)s;
}

static int NVTX_API on_domain_push(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a) {
    log_line("push\t%s\t%s", domain_name(d), event_message(a));
    return 0;
}

static int NVTX_API on_domain_pop(nvtxDomainHandle_t d) {
    log_line("pop\t%s", domain_name(d));
    return 0;
}

static void NVTX_API on_domain_mark(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a) {
    log_line("mark\t%s\t%s", domain_name(d), event_message(a));
}

static void NVTX_API on_domain_name_category(nvtxDomainHandle_t d, uint32_t id, const char *name) {
    log_line("name_category\t%s\t%" PRIu32 "\t%s", domain_name(d), id, name ? name : "<null>");
}

static int NVTX_API on_push_a(const char *msg) {
    log_line("push\t-\t%s", msg ? msg : "<null>");
    return 0;
}

static int NVTX_API on_push_ex(const nvtxEventAttributes_t *a) {
    log_line("push\t-\t%s", event_message(a));
    return 0;
}

static int NVTX_API on_pop(void) {
    log_line("pop\t-");
    return 0;
}

static void NVTX_API on_mark_a(const char *msg) { log_line("mark\t-\t%s", msg ? msg : "<null>"); }

static void NVTX_API on_name_thread(uint32_t tid, const char *name) {
    log_line("name_thread\t%" PRIu32 "\t%s", tid, name ? name : "<null>");
}

/* The CUDA runtime module's stream naming; a stream is only a pointer here, so no CUDA needed. */
static void NVTX_API on_name_cuda_stream(void *stream, const char *name) {
    log_line("name_stream\t%p\t%s", stream, name ? name : "<null>");
}

static void NVTX_API on_name_cuda_device(int device, const char *name) {
    log_line("name_device\t%d\t%s", device, name ? name : "<null>");
}

/* Install handler fn at slot id of one module's table, when that module and slot exist. */
static void install(const NvtxExportTableCallbacks *cb, NvtxCallbackModule module, unsigned id,
                    NvtxFunctionPointer fn) {
    NvtxFunctionTable table = NULL;
    unsigned int size = 0;
    if (!cb->GetModuleFunctionTable(module, &table, &size) || !table) return;
    if (id < size && table[id]) *table[id] = fn;
}

static void open_log(void) {
    const char *base = getenv("GOLMPI_NVTX_LOG");
    if (!base || !*base) base = "nvtx_log";
    const char *rank = getenv("OMPI_COMM_WORLD_RANK");
    if (!rank) rank = getenv("PMIX_RANK");
    if (!rank) rank = getenv("SLURM_PROCID");
    char path[4096];
    if (rank) snprintf(path, sizeof path, "%s.rank%s", base, rank);
    else snprintf(path, sizeof path, "%s.pid%ld", base, (long)getpid());
    log_file = fopen(path, "w");
    if (!log_file) fprintf(stderr, "nvtx_inject: cannot open %s\n", path);
}

#define FN(f) ((NvtxFunctionPointer)(void (*)(void))(f))

/* The entry point NVTX looks up in the library named by NVTX_INJECTION64_PATH. Non-zero: success. */
__attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_table) {
    const NvtxExportTableCallbacks *cb =
        (const NvtxExportTableCallbacks *)get_table(NVTX_ETID_CALLBACKS);
    if (!cb || cb->struct_size < sizeof *cb) return 0;
    open_log();
    if (!log_file) return 0;

    install(cb, NVTX_CB_MODULE_CORE, NVTX_CBID_CORE_RangePushA, FN(on_push_a));
    install(cb, NVTX_CB_MODULE_CORE, NVTX_CBID_CORE_RangePushEx, FN(on_push_ex));
    install(cb, NVTX_CB_MODULE_CORE, NVTX_CBID_CORE_RangePop, FN(on_pop));
    install(cb, NVTX_CB_MODULE_CORE, NVTX_CBID_CORE_MarkA, FN(on_mark_a));
    install(cb, NVTX_CB_MODULE_CORE, NVTX_CBID_CORE_NameOsThreadA, FN(on_name_thread));

    install(cb, NVTX_CB_MODULE_CORE2, NVTX_CBID_CORE2_DomainCreateA, FN(on_domain_create));
    install(cb, NVTX_CB_MODULE_CORE2, NVTX_CBID_CORE2_DomainDestroy, FN(on_domain_destroy));
    install(cb, NVTX_CB_MODULE_CORE2, NVTX_CBID_CORE2_DomainRegisterStringA, FN(on_register_string));
    install(cb, NVTX_CB_MODULE_CORE2, NVTX_CBID_CORE2_DomainRangePushEx, FN(on_domain_push));
    install(cb, NVTX_CB_MODULE_CORE2, NVTX_CBID_CORE2_DomainRangePop, FN(on_domain_pop));
    install(cb, NVTX_CB_MODULE_CORE2, NVTX_CBID_CORE2_DomainMarkEx, FN(on_domain_mark));
    install(cb, NVTX_CB_MODULE_CORE2, NVTX_CBID_CORE2_DomainNameCategoryA, FN(on_domain_name_category));

    install(cb, NVTX_CB_MODULE_CUDART, NVTX_CBID_CUDART_NameCudaStreamA, FN(on_name_cuda_stream));
    install(cb, NVTX_CB_MODULE_CUDART, NVTX_CBID_CUDART_NameCudaDeviceA, FN(on_name_cuda_device));

    log_line("init\t%ld", (long)getpid());
    return 1;
}
