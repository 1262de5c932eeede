#include "src/provenance.h"

#include <hdf5.h>
#include <stdio.h>
#include <string.h>

#include "golmpi_build.h"
#include "golmpi_git.h"
#ifdef GOLMPI_HAVE_CUDA
#include "cuda/device.h"
#endif

#ifndef GOLMPI_VERSION
#define GOLMPI_VERSION "0.1.0"
#endif

static void mpi_library_version(char *text, size_t len) {
    char lib[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    int n = 0;
    if (MPI_Get_library_version(lib, &n) != MPI_SUCCESS) snprintf(lib, sizeof lib, "unknown");
    lib[strcspn(lib, "\n")] = '\0'; /* MPICH adds lines of configure options */
    snprintf(text, len, "%s", lib);
}

void provenance_versions(gol_versions *v) {
    memset(v, 0, sizeof *v);
    snprintf(v->golmpi, sizeof v->golmpi, "%s", GOLMPI_VERSION);
    snprintf(v->commit, sizeof v->commit, "%s", GOLMPI_GIT_COMMIT);
    snprintf(v->compiler, sizeof v->compiler, "%s", GOLMPI_C_COMPILER);
    snprintf(v->cuda_compiler, sizeof v->cuda_compiler, "%s", GOLMPI_CUDA_COMPILER);
    mpi_library_version(v->mpi, sizeof v->mpi);
    int major = 0, minor = 0;
    if (MPI_Get_version(&major, &minor) == MPI_SUCCESS)
        snprintf(v->mpi_standard, sizeof v->mpi_standard, "%d.%d", major, minor);
    unsigned h_major = 0, h_minor = 0, h_release = 0;
    if (H5get_libversion(&h_major, &h_minor, &h_release) >= 0)
        snprintf(v->hdf5, sizeof v->hdf5, "%u.%u.%u", h_major, h_minor, h_release);
    else
        snprintf(v->hdf5, sizeof v->hdf5, "unknown");
#ifdef GOLMPI_HAVE_CUDA
    device_versions(v->cuda_runtime, v->cuda_driver, v->nccl, sizeof v->nccl);
#else
    snprintf(v->cuda_runtime, sizeof v->cuda_runtime, "none");
    snprintf(v->cuda_driver, sizeof v->cuda_driver, "none");
    snprintf(v->nccl, sizeof v->nccl, "none");
#endif
}

void provenance_iso_time(time_t t, char *text, size_t len) {
    struct tm utc;
    if (!gmtime_r(&t, &utc) || strftime(text, len, "%Y-%m-%dT%H:%M:%SZ", &utc) == 0)
        snprintf(text, len, "unknown");
}
