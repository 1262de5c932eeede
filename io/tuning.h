/* How the writer writes: the MPI-IO transfer mode of the frames, the MPI-IO hints and the writer
 * thread's cores, chosen from the slab by what was measured (docs/PERFORMANCE.md, Frames at disk
 * speed), and each overridable from the environment:
 *   GOLMPI_IO_TRANSFER = auto | independent | collective   (the frames' H5Dwrite)
 *   GOLMPI_WRITER_CPUS = auto | inherit                    (the writer thread's affinity)
 *   ROMIO_HINTS, OMPI_MCA_io, OMPI_MCA_io_ompio_*, ...: MPI-IO's own, read by MPI. golmpi's one
 *   hint (romio_ds_write=disable, with independent writes) is given only when ROMIO_HINTS is
 *   unset, so a user's hints file speaks alone. */
#ifndef GOLMPI_IO_TUNING_H
#define GOLMPI_IO_TUNING_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/decomp.h"
#include "core/status.h"

typedef struct io_tuning {
    bool independent; /* the frames go by independent MPI-IO, each rank its own ranges */
    MPI_Info info;    /* hints for every chunk file's MPI_File_open (io_tuning_free frees) */
} io_tuning;

/* Not collective. A user error naming the variable when GOLMPI_IO_TRANSFER or GOLMPI_WRITER_CPUS
 * holds anything but the values above. */
gol_status io_tuning_check(void);

/* Collective over comm: every rank takes the same transfer mode (a collective H5Dwrite must be
 * collective on every rank). row_bytes: the bytes of one frame row. */
io_tuning io_tuning_choose(const gol_slab *slab, int64_t row_bytes, MPI_Comm comm);
void io_tuning_free(io_tuning *t);

/* Collective over comm. The cores of this node that no rank of comm may run on (the ranks' own
 * affinity masks, as mpirun bound them): there the writer thread neither takes the compute's core
 * nor waits for it. False, and *set untouched, when there are none or GOLMPI_WRITER_CPUS is
 * "inherit": the writer then runs where its rank runs. set: a cpu_set_t. */
bool io_writer_cpus(MPI_Comm comm, void *set);

#endif
