/* Where a result came from: the versions of golmpi and of every library it was built with and
 * loaded, for --version and --stats (DESIGN, Observability). */
#ifndef GOLMPI_PROVENANCE_H
#define GOLMPI_PROVENANCE_H

#include <mpi.h>
#include <stddef.h>
#include <time.h>

typedef struct gol_versions {
    char golmpi[32];
    /* the git commit at build time, "-dirty" with local changes, or "unknown" */
    char commit[64];
    char compiler[64];      /* the C compiler: "GNU 12.2.0" */
    char cuda_compiler[64]; /* "NVIDIA 12.4.131", or "none" */
    /* MPI_Get_library_version's first line, and MPI_Get_version's standard: "3.1" */
    char mpi[MPI_MAX_LIBRARY_VERSION_STRING], mpi_standard[16];
    char hdf5[32]; /* the HDF5 loaded (H5get_libversion) */
    /* the CUDA runtime, the driver's CUDA version and NCCL: "none" without CUDA */
    char cuda_runtime[32], cuda_driver[32], nccl[32];
} gol_versions;

/* Not collective; callable before MPI_Init and after MPI_Finalize. */
void provenance_versions(gol_versions *v);

/* "2026-11-21T14:28:05Z": t in ISO 8601, UTC. */
void provenance_iso_time(time_t t, char *text, size_t len);

#endif
