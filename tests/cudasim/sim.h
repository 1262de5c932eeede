/* The simulated GPU's inside (tests/cudasim): one lock over its state, a worker thread per
 * stream, vector clocks for the race check, device memory the host cannot address.
 *
 * Order: every stream has a clock slot; an operation enqueued on stream s gets s's next tick and
 * the clock that orders it (what s had, what the host has seen complete, and what events waited on
 * brought in). A range an operation touches is checked at enqueue against the ranges earlier
 * operations touched: two touches of the same bytes, one a write, neither ordered before the other,
 * is a race, reported whether or not the schedule let them overlap. */
#ifndef GOLMPI_CUDASIM_SIM_H
#define GOLMPI_CUDASIM_SIM_H

#include <pthread.h>
#include <stdint.h>

#include "cuda_runtime_api.h"
#include "cudasim.h"

enum { SIM_SLOTS = 1024 }; /* clock slots: one a stream ever created, the host's last */
enum { SIM_HOST_SLOT = SIM_SLOTS - 1 };
enum { SIM_SITE_FRAMES = 8 };
/* Submissions queued on the device and not yet done, at most: the launch queue, past which the
 * enqueuing host thread blocks (CUDA documents only that any call may block "for contention for
 * or unavailability of internal resources"). A submission is one call: a kernel, a copy, a record,
 * a wait, an NCCL group, or a whole graph launch. The driver's real depth is unpublished: 1024 is
 * our choice, not a measurement. golmpi must not depend on it: its watchdog bounds the
 * generations queued, and a test that fills the queue blocks at whatever depth this is. */
enum { SIM_QUEUE_DEPTH = 1024 };

typedef struct sim_vc {
    uint32_t c[SIM_SLOTS];
} sim_vc;

/* Where a call came from: the caller's stack, printed with addr2line in a report. */
typedef struct sim_site {
    void *frame[SIM_SITE_FRAMES];
    int n;
} sim_site;

/* OP_MARK: nothing to run; the last operation of a graph launch, whose queue entry it frees */
enum sim_op_kind { OP_KERNEL, OP_COPY, OP_SET, OP_RECORD, OP_WAIT, OP_NCCL, OP_MARK };

typedef struct sim_op {
    enum sim_op_kind kind;
    uint32_t tick;  /* its stream's clock value */
    int holds_slot; /* frees an entry of the launch queue when done (SIM_QUEUE_DEPTH) */
    const char *what;
    sim_site site;
    /* OP_KERNEL */
    void (*body)(void *);
    void *arg;
    size_t arg_bytes;
    /* OP_COPY (a 2-D copy of height rows of width bytes) and OP_SET */
    char *dst;
    const char *src;
    int staged; /* src is the simulator's copy of pageable host memory, freed with the op */
    size_t width, height, dpitch, spitch;
    int value;
    /* OP_RECORD, OP_WAIT */
    struct CUevent_st *event;
    uint32_t record; /* the event's record number this op makes or waits for */
    /* OP_NCCL */
    struct sim_group *group;
    /* the ranges, for the host's view of pinned memory (released when the host sees the op done) */
    cudasim_access acc[8];
    int nacc;
    /* the legacy default stream's implicit order: (stream, tick) pairs to wait for first */
    struct sim_after {
        struct CUstream_st *stream;
        uint32_t tick;
    } * after;
    int nafter;
    struct sim_op *next;
} sim_op;

struct CUstream_st {
    int slot;
    int priority;
    unsigned flags;
    sim_vc vc;     /* the clock of its last operation */
    uint32_t tick; /* operations enqueued */
    uint32_t done; /* operations completed */
    sim_op *head, *tail;
    pthread_t worker;
    int quit;
    uint64_t rng;
    struct sim_capture *capture; /* capturing into this graph, or NULL */
    int lane;                    /* its lane in that capture */
    int internal;                /* a graph's own lane stream */
    int destroyed;               /* cudaStreamDestroy returned: its worker runs the rest out */
};

struct CUevent_st {
    unsigned flags;
    uint32_t recorded;           /* records enqueued */
    uint32_t completed;          /* records the stream passed */
    sim_vc vc;                   /* the clock of the last record's position */
    double seconds;              /* when the last completed record was passed */
    struct sim_capture *capture; /* recorded inside this capture */
    int cap_lane, cap_item;      /* the lane, and the capture item it follows */
    int captured_last;           /* last recorded in a capture now ended: unusable until
                                    recorded again */
    int waiters;                 /* queued waits on it */
    int destroyed;               /* freed once no queued operation names it */
};

/* The state, under sim_lock. */
typedef struct sim_state {
    pthread_mutex_t lock;
    pthread_cond_t changed;        /* an operation completed, or a stream got work */
    sim_vc host;                   /* what the host has seen complete */
    int slots;                     /* clock slots handed out */
    uint32_t slot_tick[SIM_SLOTS]; /* a freed slot's last tick, where its next stream goes on */
    int free_slots[SIM_SLOTS], nfree;
    struct CUstream_st *streams[SIM_SLOTS];
    struct CUstream_st *null_stream;
    uint64_t seed;       /* GOLMPI_SIM_SEED; 0: no delays */
    int races;           /* reported so far */
    double stall_at;     /* GOLMPI_SIM_STALL_AFTER_S on this rank: the device stops then */
    int stall_said;      /* the stop announced on stderr (SIM_STALL_LINE), once */
    int queued;          /* submissions enqueued and not yet done, all streams: SIM_QUEUE_DEPTH */
    int graph_launch;    /* a graph launch is enqueuing its nodes: they take no queue entry */
    int queue_full_said; /* SIM_QUEUE_FULL_LINE printed */
} sim_state;

extern sim_state sim;

/* Printed once when the stalled device stops, so a test times the fault from the moment it
 * happens, not from a guess at when the device was first used. It names no rank: a test's check
 * for the line that names the faulty rank must find golmpi's, not this one. */
#define SIM_STALL_LINE "cudasim: the device stops now (GOLMPI_SIM_STALL_AFTER_S)\n"

/* Printed once when a host thread first blocks in the full launch queue: golmpi's watchdog bounds
 * the work it queues far below SIM_QUEUE_DEPTH, so in a golmpi run this line is a fault of that
 * bound, seen the moment it happens (tests/test_sim_faults.py). */
#define SIM_QUEUE_FULL_LINE                                                                        \
    "cudasim: the launch queue is full: a host thread blocks until the device makes room\n"

void sim_init(void); /* once, from every entry point */
double sim_now(void);
void sim_site_here(sim_site *site);
void sim_site_print(const sim_site *site, const char *indent);
void sim_fatal(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
cudaError_t sim_error(cudaError_t e); /* sets the thread's last error; returns e */
int sim_rank(void);                   /* from the launcher's environment; 0 alone */

/* memory (sim_mem.c) */
int sim_is_device(const void *p, size_t bytes);
int sim_is_pinned(const void *p, size_t bytes);
void *sim_worker_ptr(const void *p);
void sim_mem_init(void);
void sim_pinned_hold(const sim_op *op, int slot);
void sim_pinned_release(void); /* those the host clock now covers */
int sim_fault_report(void *addr);

/* streams and events (sim_stream.c) */
struct CUstream_st *sim_stream_new(int priority, unsigned flags, int internal);
void sim_stream_free(struct CUstream_st *s);
struct CUstream_st *sim_stream_of(cudaStream_t s);
void sim_queue_take(void);
cudaError_t sim_enqueue(struct CUstream_st *s, sim_op *op);
cudaError_t sim_event_record(struct CUstream_st *s, struct CUevent_st *e);      /* under the lock */
cudaError_t sim_stream_wait_event(struct CUstream_st *s, struct CUevent_st *e); /* under the lock */
void sim_host_sees(const sim_vc *vc); /* joins vc into the host's clock */
void sim_wait_stream(struct CUstream_st *s, uint32_t tick);
void sim_sync_all(void);
cudaError_t sim_capture_unsafe(void);      /* under the lock: sim_graph.c */
cudaError_t sim_capture_device_wide(void); /* under the lock: sim_graph.c */
cudaError_t sim_capture_refuses(void);     /* the same, taking the lock */

/* races (sim_race.c) */
void sim_race_check(int slot, const sim_op *op, const sim_vc *vc); /* slot: the op's clock's */
void sim_race_forget(const void *p, size_t bytes);

/* graphs (sim_graph.c) */
int sim_capture_add(struct CUstream_st *s, sim_op *op); /* 1: captured, not run */
cudaError_t sim_capture_record(struct CUstream_st *s, struct CUevent_st *e);
cudaError_t sim_capture_wait(struct CUstream_st *s, struct CUevent_st *e);
void sim_capture_invalidate(struct CUstream_st *s);

/* NCCL (sim_nccl.c) */
void sim_nccl_run(struct sim_group *g);
void sim_nccl_enqueued(struct sim_group *g); /* counts it as pending on its communicator */
void sim_nccl_group_free(struct sim_group *g);
void sim_nccl_captured(struct sim_group *g); /* its sends and receives are a graph's */
struct sim_group *sim_nccl_group_copy(const struct sim_group *g);

void sim_vc_join(sim_vc *into, const sim_vc *from);
void sim_event_release(
    struct CUevent_st *e); /* under the lock: frees a destroyed event once idle */
void sim_lock(void);
void sim_unlock(void);

#endif
