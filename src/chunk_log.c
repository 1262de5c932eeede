#include "src/chunk_log.h"

#include <stdio.h>
#include <stdlib.h>

#include "core/check.h"
#include "core/poll.h"

static const char *const stage_names[CHUNK_STAGES] = {"compute_s", "halo_s", "frame_s",
                                                      "io_write_s", "io_wait_s"};

/* This rank's figures of one chunk. */
typedef struct chunk_mine {
    int64_t g_from, bytes;
    double v[CHUNK_STAGES];
} chunk_mine;

struct gol_chunk_log {
    const gol_schedule *sched;
    bool profile;
    int rank, nranks;
    MPI_Comm comm; /* its own: the writer thread's reductions never meet another collective */
    int64_t n;     /* chunks of the schedule at the start: the most the run can write */
    chunk_mine *mine;
};

typedef struct {
    double v;
    int rank;
} double_int; /* MPI_DOUBLE_INT */

gol_chunk_log *chunk_log_open(const gol_schedule *sched, bool profile, MPI_Comm comm) {
    gol_chunk_log *log = gol_xcalloc(1, sizeof *log);
    log->sched = sched;
    log->profile = profile;
    MPI_CHECK(MPI_Comm_rank(comm, &log->rank));
    MPI_CHECK(MPI_Comm_size(comm, &log->nranks));
    MPI_CHECK(MPI_Comm_dup(comm, &log->comm));
    log->n = schedule_chunks(sched);
    log->mine = gol_xcalloc((size_t)(log->n > 0 ? log->n : 1), sizeof *log->mine);
    return log;
}

void chunk_log_begin(gol_chunk_log *log, int64_t chunk, int64_t g) { log->mine[chunk].g_from = g; }

void chunk_log_backend(gol_chunk_log *log, int64_t chunk, gol_backend_times t) {
    double *v = log->mine[chunk].v;
    v[CHUNK_COMPUTE] = t.compute_s;
    v[CHUNK_HALO] = t.halo_s;
    v[CHUNK_FRAME] = t.frame_s;
}

static int both_done(void *req, double since) {
    (void)since;
    int done = 0;
    MPI_CHECK(MPI_Testall(2, req, &done, MPI_STATUSES_IGNORE));
    return done;
}

/* Waits for both requests, napping between tests: a blocking MPI wait spins (Open MPI), and on
 * the writer thread it would take a core from the generations while a slower rank catches up. A
 * rank that stopped answering is the heartbeat's to find. */
static void wait_sleeping(MPI_Request req[2]) { gol_poll_every(both_done, req, 0, 200e-6); }

/* Chunks [first, first + n): maxima with their ranks, and means, into rank 0's rows (NULL
 * elsewhere). */
static void reduce_rows(gol_chunk_log *log, int64_t first, int64_t n, gol_chunk_row *rows) {
    int64_t m = n * CHUNK_STAGES;
    double_int *pair = gol_xmalloc((size_t)m * sizeof *pair);
    double *sum = gol_xmalloc((size_t)m * sizeof *sum);
    for (int64_t c = 0; c < n; c++)
        for (int i = 0; i < CHUNK_STAGES; i++) {
            pair[c * CHUNK_STAGES + i] = (double_int){log->mine[first + c].v[i], log->rank};
            sum[c * CHUNK_STAGES + i] = log->mine[first + c].v[i];
        }
    int root = log->rank == 0;
    MPI_Request req[2];
    MPI_CHECK(MPI_Ireduce(root ? MPI_IN_PLACE : pair, pair, (int)m, MPI_DOUBLE_INT, MPI_MAXLOC, 0,
                          log->comm, &req[0]));
    MPI_CHECK(MPI_Ireduce(root ? MPI_IN_PLACE : sum, sum, (int)m, MPI_DOUBLE, MPI_SUM, 0, log->comm,
                          &req[1]));
    wait_sleeping(req);
    for (int64_t c = 0; root && c < n; c++) {
        const gol_schedule *s = log->sched;
        gol_chunk_row *r = &rows[c];
        int64_t k = first + c, last = schedule_chunk_first(s, k) + schedule_chunk_frames(s, k) - 1;
        r->g_from = log->mine[k].g_from;
        r->g_to = schedule_frame_generation(s, last);
        r->frames = schedule_chunk_frames(s, k);
        r->bytes = log->mine[k].bytes;
        for (int i = 0; i < CHUNK_STAGES; i++) {
            r->max[i] = pair[c * CHUNK_STAGES + i].v;
            r->rank[i] = pair[c * CHUNK_STAGES + i].rank;
            r->mean[i] = sum[c * CHUNK_STAGES + i] / log->nranks;
        }
    }
    free(pair);
    free(sum);
}

/* One flushed line (never \r), so that batch logs show it as the run goes. */
static void print_row(int64_t chunk, const gol_chunk_row *r) {
    static const char *const label[CHUNK_STAGES] = {"compute", "halo", "frames", "write", "wait"};
    printf("chunk %lld  generations %lld-%lld", (long long)chunk, (long long)r->g_from,
           (long long)r->g_to);
    for (int i = 0; i < CHUNK_STAGES; i++)
        printf("  %s %.4f s (rank %d)", label[i], r->max[i], r->rank[i]);
    printf("  %.2f MiB\n", (double)r->bytes / 1048576.0);
    fflush(stdout);
}

/* output_chunk_done, on the thread that wrote the chunk: the chunks come in order on every rank,
 * so the reduction for --profile pairs up across ranks. */
static void chunk_written(void *ctx, int64_t chunk, double write_s, double wait_s, int64_t bytes) {
    gol_chunk_log *log = ctx;
    chunk_mine *me = &log->mine[chunk];
    me->v[CHUNK_WRITE] = write_s;
    me->v[CHUNK_WAIT] = wait_s;
    me->bytes = bytes;
    if (!log->profile) return;
    gol_chunk_row row = {0};
    reduce_rows(log, chunk, 1, &row);
    if (log->rank == 0) print_row(chunk, &row);
}

void chunk_log_attach(gol_chunk_log *log, gol_output *out) {
    output_on_chunk(out, chunk_written, log);
}

void chunk_log_close(gol_chunk_log *log, const gol_output_stats *st, bool keep,
                     gol_chunk_table *table) {
    int64_t n = st->files; /* the chunks written, alike on every rank */
    double waited = 0.0;
    for (int64_t c = 0; c < n; c++)
        waited += log->mine[c].v[CHUNK_WAIT];
    if (n > 0) log->mine[n - 1].v[CHUNK_WAIT] += st->wait_s - waited;
    table->rows = NULL;
    table->n = 0;
    if (keep) {
        gol_chunk_row *rows =
            log->rank == 0 ? gol_xcalloc((size_t)(n > 0 ? n : 1), sizeof *rows) : NULL;
        reduce_rows(log, 0, n, rows);
        table->rows = rows;
        table->n = rows ? n : 0;
    }
    MPI_CHECK(MPI_Comm_free(&log->comm));
    free(log->mine);
    free(log);
}

void chunk_table_json(cJSON *root, const gol_chunk_table *t) {
    cJSON *list = cJSON_AddArrayToObject(root, "chunks");
    for (int64_t c = 0; c < t->n; c++) {
        const gol_chunk_row *r = &t->rows[c];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "chunk", (double)c);
        cJSON_AddNumberToObject(o, "generation_from", (double)r->g_from);
        cJSON_AddNumberToObject(o, "generation_to", (double)r->g_to);
        cJSON_AddNumberToObject(o, "generations", (double)(r->g_to - r->g_from));
        cJSON_AddNumberToObject(o, "frames", (double)r->frames);
        cJSON_AddNumberToObject(o, "bytes", (double)r->bytes);
        for (int i = 0; i < CHUNK_STAGES; i++) {
            cJSON *one = cJSON_AddObjectToObject(o, stage_names[i]);
            cJSON_AddNumberToObject(one, "max", r->max[i]);
            cJSON_AddNumberToObject(one, "rank", r->rank[i]);
            cJSON_AddNumberToObject(one, "mean", r->mean[i]);
        }
        cJSON_AddItemToArray(list, o);
    }
}

void chunk_table_free(gol_chunk_table *t) {
    free(t->rows);
    t->rows = NULL;
    t->n = 0;
}
