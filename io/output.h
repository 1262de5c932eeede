/* io/ is a layer below the program and the backends, beside halo/: everything that writes or reads
 * golmpi's files.
 *
 * Chunk files, the index and the XDMF description (DESIGN, Output). One writer thread per rank
 * makes every HDF5 call, so the generation loop goes on while a chunk is written. */
#ifndef GOLMPI_OUTPUT_H
#define GOLMPI_OUTPUT_H

#include <mpi.h>
#include <stdint.h>

/* output_chunk_name, which callers of this API use to find the chunk files */
#include "core/config.h"
#include "core/decomp.h"
#include "core/schedule.h"
#include "io/format.h"
#include "io/series.h"
#include "io/tuning.h"

typedef struct gol_output gol_output;

typedef struct gol_output_stats {
    int64_t bytes_written; /* frame and generation bytes in chunk files, all ranks together */
    int64_t files;         /* finished chunk files */
    double write_s;        /* this rank's time inside HDF5 (writer thread) */
    double wait_s;         /* this rank's main-thread time blocked on the writer */
    /* how the frames went: collective (H5Pget_mpio_actual_io_mode) or direct where every frame on
     * every rank did, else independent */
    enum io_transfer transfer;
    /* Rank 0: the generation and live cells of each written frame (`frames` values each, as in
     * /generations and /population), owned by the caller (free both); NULL on the other ranks. */
    int64_t *generations, *population;
    int64_t frames;
} gol_output_stats;

/* Collective, before output_open and before any other thread runs (it sets the MPI-IO
 * environment). A user error, before anything is written, when the output directory cannot be
 * written, a name of the run is too long or is a directory, an output file of this run already
 * exists (without --force), or another run writes to the same output (the lock). On success
 * rank 0 holds "<base>.lock" until output_close or exit, and has removed the stale .part files
 * of an earlier, killed run to this output, saying so on stderr. With --dry-run (cfg->dry_run)
 * the same checks, but the lock is given back at once and stale files stay. A file that cannot be written
 * later ends the run on every rank with GOL_EXIT_OUTPUT (core/status.h) and one message. */
gol_status output_check(const gol_config *cfg, const gol_schedule *sched, MPI_Comm comm);

/* Collective. Starts the writer thread. ranks/seed/density/rule/boundary go into the attributes. */
gol_output *output_open(const gol_config *cfg, const gol_slab *slab, const gol_schedule *sched,
                        MPI_Comm comm);

/* Collective at each chunk's first frame (f == 0): every rank checks the disk's room for the
 * chunk together (an MPI_Bcast; if it is short, all end alike); local at the other frames.
 * Hand frame f of chunk `chunk` to the writer: frames_h is the chunk's slot, its frames one after
 * the other (slab->rows rows of the frame format each), and frames 0..f are in it. Frames come in
 * order, chunk after chunk; the writer writes each as it comes, while the next is computed. The
 * slot belongs to the writer from the chunk's first frame until output_wait_slot(o, slot) returns
 * after its last; the main thread may only fill the frames it has not handed over yet. */
void output_write_frame(gol_output *o, int slot, int64_t chunk, int64_t f, const void *frames_h);
/* The one wait for a slot: the caller, which refills the slot's buffer, waits here until the
 * writer is done with the chunk it last held, before the buffer's first new frame is made and
 * before that chunk's first frame is handed over (output_write_frame refuses a busy slot). Main
 * thread; polls with the watchdogs of host waits. Nothing without a writer thread. */
void output_wait_slot(gol_output *o, int slot);

/* Before the first chunk is handed over, on every rank: this run continues the series `prior`
 * (--restart X.h5 --output X.h5), which must outlive the output. The index and the XDMF file list
 * its chunks ahead of this run's. */
void output_continue_series(gol_output *o, const io_series *prior);

/* Main thread, when the ranks agreed to stop at generation g_stop (a signal, src/run.c): the run
 * now ends there, schedule_truncate(sched, g_stop); the chunk that holds that frame is its last.
 * Before that frame is handed over (earlier frames of its chunk may have been). */
void output_stop_at(gol_output *o, int64_t g_stop);

/* Per-chunk figures (src/chunk_log.h): after output_open and before the first chunk is handed
 * over, done(ctx, chunk, write_s, wait_s, bytes) is called once a chunk, in chunk order, on every
 * rank, on the thread that writes (the writer thread, or the main thread when writes are
 * synchronous), once the chunk's file and the index (rank 0) are written: write_s is this rank's
 * time writing them (its share of io_write_s), wait_s the main thread's time blocked on the writer
 * since the chunk before was handed over (a free slot; its share of io_wait_s; the wait in
 * output_close comes after and belongs to no chunk), bytes the chunk's share of bytes_written.
 * done may make collective calls on a communicator of its own. */
typedef void output_chunk_done(void *ctx, int64_t chunk, double write_s, double wait_s,
                               int64_t bytes);
void output_on_chunk(gol_output *o, output_chunk_done *done, void *ctx);

/* Collective. Waits for every write, leaves the index and XDMF final, stops the thread. */
void output_close(gol_output *o, gol_output_stats *stats);

#endif
