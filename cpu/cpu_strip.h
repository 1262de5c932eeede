/* cpu/ is a layer below the backend table: the CPU backend (cpu/backend_cpu.c) and its kernel.
 *
 * The CPU backend's generation step: rows of a packed slab walked down in column strips of SIMD
 * vectors, built once per instruction set (cpu/CMakeLists.txt) and chosen at run time. */
#ifndef GOLMPI_CPU_STRIP_H
#define GOLMPI_CPU_STRIP_H

#include <stdint.h>

#include "core/life_word.h"

/* One generation of rows [lo, hi) of src into dst, both pointing at row 0 of a buffer of rows of
 * nw words; rows lo-1 and hi must be readable, and src and dst must not overlap. Columns wrap when
 * torus is set; otherwise the cells past the row ends are dead. */
typedef void cpu_strip_fn(const uint64_t *src, uint64_t *dst, int64_t lo, int64_t hi, int64_t nw,
                          int64_t width, int torus, gol_rule rule);

typedef struct cpu_strip_kernel {
    const char *isa;  /* "avx512", "avx2" or "base" */
    int vector_bytes; /* the width of one SIMD vector it works in */
    cpu_strip_fn *rows;
} cpu_strip_kernel;

/* The kernel for an instruction set this CPU runs, or NULL (an unknown name, or one the CPU or
 * this build lacks). */
const cpu_strip_kernel *cpu_strip_find(const char *isa);

/* The fastest kernel this CPU runs, unless GOLMPI_CPU_ISA names another (tests, benchmarks); a
 * name the CPU cannot run is an error the caller reports. */
const cpu_strip_kernel *cpu_strip_pick(const char **bad_name);

#endif
