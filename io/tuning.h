/* How the writer writes: how the frames travel, the MPI-IO hints and the writer thread's cores,
 * chosen from the slab by what was measured (docs/PERFORMANCE.md, Frames at disk speed), and each
 * overridable from the environment:
 *   GOLMPI_IO_TRANSFER = auto | direct | independent | collective   (the frames' writes)
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

/* How the frames travel, from the most shared to the least:
 * - collective: one collective H5Dwrite a frame, which MPI-IO may merge through aggregators;
 * - independent: each rank's H5Dwrite of its own range, through MPI-IO and the page cache;
 * - direct: each rank writes its range itself, with O_DIRECT at the offset HDF5 allocated, from
 *   the slot straight to the disk: no page-cache copy, and no write-back left for the fsync.
 *   It needs every range, the frame stride and the slot aligned to IO_DIRECT_ALIGN, and a file
 *   system that takes O_DIRECT; a chunk file where either fails is written independently. */
enum io_transfer { IO_TRANSFER_COLLECTIVE, IO_TRANSFER_INDEPENDENT, IO_TRANSFER_DIRECT };

/* The alignment of file offsets, lengths and memory O_DIRECT gets: a page, which every Linux
 * block device's logical block size divides. */
#define IO_DIRECT_ALIGN 4096

typedef struct io_tuning {
    enum io_transfer transfer;
    MPI_Info info; /* hints for every chunk file's MPI_File_open (io_tuning_free frees) */
} io_tuning;

/* "collective", "independent" or "direct" */
const char *io_transfer_name(enum io_transfer t);

/* Not collective. A user error naming the variable when GOLMPI_IO_TRANSFER or GOLMPI_WRITER_CPUS
 * holds anything but the values above. */
gol_status io_tuning_check(void);

/* Collective over comm: every rank takes the same transfer mode (a collective H5Dwrite must be
 * collective on every rank; direct needs every rank's range aligned). row_bytes: the bytes of one
 * frame row. */
io_tuning io_tuning_choose(const gol_slab *slab, int64_t row_bytes, MPI_Comm comm);
void io_tuning_free(io_tuning *t);

/* Collective over comm. The cores of this node that no rank of comm may run on (the ranks' own
 * affinity masks, as mpirun bound them): there the writer thread neither takes the compute's core
 * nor waits for it. False, and *set untouched, when there are none or GOLMPI_WRITER_CPUS is
 * "inherit": the writer then runs where its rank runs. set: a cpu_set_t. */
bool io_writer_cpus(MPI_Comm comm, void *set);

#endif
