/* What the writing files of io/ share with each other and with no one else. Every function here
 * makes HDF5 calls, so it runs only on the writer thread (HDF5 1.10 is not thread-safe). Reading
 * a golmpi file is io/golfile's. */
#ifndef GOLMPI_IO_INTERNAL_H
#define GOLMPI_IO_INTERNAL_H

#include <hdf5.h>
#include <mpi.h>
#include <stdint.h>

#include "core/config.h"
#include "core/decomp.h"
#include "core/schedule.h"
#include "io/format.h"
#include "io/series.h"
#include "io/tuning.h"

/* The root attributes every golmpi file carries, so any one file describes its run. */
typedef struct io_meta {
    char rule[32];
    const char *boundary; /* config_boundary_name: "torus" or "dead" */
    const char *encoding; /* IO_ENCODING_U8 or IO_ENCODING_PACKED */
    int64_t width, height;
    int64_t row_bytes; /* bytes of one frame row: width, or ceil(width/8) packed */
    uint64_t seed;
    double density;
    int32_t ranks;
} io_meta;

void io_write_root_attrs(hid_t loc, const io_meta *m);
void io_write_str_attr(hid_t loc, const char *name, const char *value);

/* "dir/life_000000-000010.h5" -> "life_000000-000010.h5" (no copy). */
const char *io_basename(const char *path);

/* One chunk file, written over comm (every rank makes each call, in the same order), frame by
 * frame: chunk_h5_create makes "<name>.part" with /frames allocated for nframes frames;
 * chunk_h5_write_frame writes the next frame, this rank's rows (slab) from frame_h; once all
 * nframes are in, chunk_h5_finish writes /generations (gens, nframes values) and /population (the
 * live cells of each frame, counted from the bytes written and summed over comm; on rank 0 also
 * into pop_out, which may be NULL), reads the file back against frames_h (every frame, one after
 * the other, as written) and renames it to `name` (which may differ from the name it was created
 * under: a run stopped in the chunk ends it at another generation). It returns how this rank's
 * frames went: collective or direct where every one did, else independent. chunk_h5_abandon closes
 * a chunk file before its end and removes it (its frames are written again, fewer of them, under
 * another name). t: the frames' transfer mode and the MPI-IO hints (io/tuning.h; NULL: collective,
 * no hints). */
typedef struct chunk_h5 chunk_h5;
chunk_h5 *chunk_h5_create(MPI_Comm comm, const char *name, const io_meta *m, const gol_slab *slab,
                          const io_tuning *t, int64_t nframes);
void chunk_h5_write_frame(chunk_h5 *c, const void *frame_h);
enum io_transfer chunk_h5_finish(chunk_h5 *c, const char *name, const int64_t *gens,
                                 const void *frames_h, int64_t *pop_out);
void chunk_h5_abandon(chunk_h5 *c);

/* The three steps at once, for a chunk whose frames are all in frames_h (one after the other). */
enum io_transfer chunk_h5_write(MPI_Comm comm, const char *name, const io_meta *m,
                                const gol_slab *slab, const io_tuning *t, int64_t nframes,
                                const int64_t *gens, const void *frames_h, int64_t *pop_out);

/* Rank 0 only: the index "<base>.h5" over chunks [0, nchunks) of sched, replaced atomically.
 * population: the live cells of the frames of those chunks, from their first frame on. prior: the
 * series this run continues (its chunks come first), or NULL. */
void index_h5_write(const char *base, const io_meta *m, const gol_schedule *sched, int64_t nchunks,
                    const int64_t *population, const io_series *prior);

/* Rank 0 only: "<base>.xmf" over chunks [0, nchunks), replaced atomically. The state keeps the
 * text of the frames already described, so a refresh formats only the new chunk. */
typedef struct xdmf_state xdmf_state;
xdmf_state *xdmf_create(const char *base, const io_meta *m);
void xdmf_add_chunk(xdmf_state *x, const char *chunk_name, int64_t nframes, const int64_t *gens);
void xdmf_write(xdmf_state *x);
void xdmf_destroy(xdmf_state *x);

/* The debug setting GOLMPI_DEBUG_SLOW_INDEX=SECONDS: rank 0 sleeps that long in its own metadata
 * work on each chunk (the frame views and rename of the chunk, then the index and .xmf rewrite),
 * as a slow file system would hold it while the other ranks go on to the next exchange. For
 * tests/test_corner_cases.py's "slow_index" case only: the halo watchdog must not take a rank busy in its own
 * I/O for a stopped one. Nothing when unset. */
void io_debug_slow_meta(void);

/* rename(2) checked: the atomic step that makes a finished file visible. */
void io_rename(const char *from, const char *to);

#endif
