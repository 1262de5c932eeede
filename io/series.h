/* A series: the frames of one run and of every run that continued it into the same output
 * (--restart X.h5 --output X.h5, DESIGN: Checkpoint and resume). The index lists the chunks of
 * the runs before; the run that continues the series keeps them in the index and the .xmf it
 * rewrites, ahead of its own. */
#ifndef GOLMPI_IO_SERIES_H
#define GOLMPI_IO_SERIES_H

#include <stdint.h>

#include "core/status.h"

typedef struct io_series {
    int64_t nchunks;
    int64_t *chunk_frames; /* [nchunks]: frames of each chunk file, in order */
    int64_t nframes;       /* their sum */
    int64_t *generations;  /* [nframes] */
    int64_t *population;   /* [nframes]; -1 where the index has no /population (older files) */
} io_series;

/* The chunks that the index `path` lists, read with HDF5's serial driver (any rank, no MPI). A user
 * error naming the file when it is not an index whose virtual /frames maps whole chunks one after
 * the other from frame 0, or /generations does not give every frame in increasing order. */
gol_status io_series_read(const char *path, io_series *s);
void io_series_free(io_series *s);

#endif
