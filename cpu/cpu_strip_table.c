/* The CPU generation step's builds (cpu/cpu_strip.c, once per instruction set) and the
 * choice among them. */
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_strip.h"

cpu_strip_fn cpu_strip_rows_base;
#ifdef GOLMPI_CPU_STRIP_X86
cpu_strip_fn cpu_strip_rows_avx2, cpu_strip_rows_avx512;
#endif

/* Fastest first. */
static const cpu_strip_kernel kernels[] = {
#ifdef GOLMPI_CPU_STRIP_X86
    {"avx512", 64, cpu_strip_rows_avx512},
    {"avx2", 32, cpu_strip_rows_avx2},
#endif
    {"base", 16, cpu_strip_rows_base},
};

/* Whether this CPU (and its OS, which must save the wider registers) runs the set; libgcc's
 * __builtin_cpu_supports checks both. */
static int cpu_runs(const char *isa) {
#ifdef GOLMPI_CPU_STRIP_X86
    __builtin_cpu_init();
    if (strcmp(isa, "avx512") == 0) return __builtin_cpu_supports("avx512f");
    if (strcmp(isa, "avx2") == 0) return __builtin_cpu_supports("avx2");
#endif
    return strcmp(isa, "base") == 0;
}

const cpu_strip_kernel *cpu_strip_find(const char *isa) {
    for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++)
        if (strcmp(kernels[i].isa, isa) == 0) return cpu_runs(isa) ? &kernels[i] : NULL;
    return NULL;
}

const cpu_strip_kernel *cpu_strip_pick(const char **bad_name) {
    *bad_name = NULL;
    const char *asked = getenv("GOLMPI_CPU_ISA");
    if (asked && *asked) {
        const cpu_strip_kernel *k = cpu_strip_find(asked);
        if (!k) *bad_name = asked;
        return k;
    }
    for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++)
        if (cpu_runs(kernels[i].isa)) return &kernels[i];
    return NULL; /* not reached: base runs everywhere */
}
