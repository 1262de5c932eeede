/* A file is renamed to its final name only once it reads back (DESIGN, Output: output that
 * survives). Open MPI's OMPIO can lose a collective write on a full disk and tell no one (its
 * aggregator prints "No space left on device", every HDF5 call succeeds), so success codes alone
 * cannot be trusted: the closed file is read back. Every function here runs on the writer thread.
 */
#ifndef GOLMPI_VERIFY_H5_H
#define GOLMPI_VERIFY_H5_H

#include <hdf5.h>
#include <mpi.h>
#include <stdint.h>

#include "core/decomp.h"
#include "io/io_internal.h"

/* Collective over comm, after every rank closed the chunk file `part` (name: its final name, for
 * messages). Every rank checks its own rows of every frame: inside the file, not in a hole unless
 * they are zeros (an unwritten range reads as zeros, and so is right only where zeros were
 * written), and the first row of the first frame and the last row of the last frame read back
 * byte for byte from frames_h. Rank 0 also opens it with HDF5: signature, /frames shape, and
 * /generations equal to gens. frames_offset: /frames' address in the file (H5Dget_offset). All
 * ranks agree; on a failure every rank aborts through io_write_failed_all, naming the file, the
 * rank and the cause. */
void verify_chunk(MPI_Comm comm, const char *part, const char *name, const io_meta *m,
                  const gol_slab *slab, int64_t nframes, const int64_t *gens, const void *frames_h,
                  haddr_t frames_offset);

/* Rank 0, the index `part` just closed: it opens, /frames is [nframes, H, row_bytes], the
 * /generations are gens, and every chunk file its virtual /frames names exists next to it under
 * its final name. On failure: io_write_failed, naming the file (the old index stays). */
void verify_index(const char *part, const io_meta *m, int64_t nframes, const int64_t *gens);

/* Rank 0: fsync(2) `part` before its rename, so a name that appears is backed by data on disk. */
void verify_sync(const char *part);

#endif
