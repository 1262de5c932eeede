/* Where this rank is: the blocking phase each of its threads is in, for the one message a lost peer
 * ends a run with (DESIGN: Errors, "Every phase has a deadline"), and the debug hook that holds a
 * rank at the entry of a phase so a test can land a fault there (GOLMPI_DEBUG_HOLD).
 *
 * Two lanes: the main thread (start-up to finalize) and the writer thread (a chunk's write, its
 * end, the index, the rename); a run without a writer thread puts the writer's phases in the
 * writer lane all the same, so the message names both. */
#ifndef GOLMPI_PHASE_H
#define GOLMPI_PHASE_H

typedef enum gol_phase {
    GOL_PHASE_NONE,
    GOL_PHASE_STARTUP,        /* "startup": the plan, the admission, the output's lock */
    GOL_PHASE_WIREUP,         /* "wireup": the backend and its halo are made (NCCL's setup) */
    GOL_PHASE_FIRST_EXCHANGE, /* "first_exchange": the first halo wait */
    GOL_PHASE_EXCHANGE,       /* "exchange": every later halo wait */
    GOL_PHASE_COMPUTE,        /* "compute": generations after a halo wait (waits on nobody) */
    GOL_PHASE_VOTE,           /* "vote": the wait for the stop vote at a piece boundary */
    GOL_PHASE_HANDOVER,       /* "handover": a frame to the writer, the wait for its slot */
    GOL_PHASE_CHUNK_WRITE,    /* "chunk_write": a chunk's file made and its frames written */
    GOL_PHASE_CHUNK_END,      /* "chunk_end": the rest of the file, its flush and read-back */
    GOL_PHASE_INDEX,          /* "index": rank 0 rewrites the index and the .xmf */
    GOL_PHASE_RENAME,         /* "rename": rank 0 gives a file its final name */
    GOL_PHASE_CHECKPOINT,     /* "checkpoint": the ranks agreed to stop on a signal */
    GOL_PHASE_REPORT,         /* "report": the closing reductions and the summary */
    GOL_PHASE_FINALIZE,       /* "finalize": the liveness helper stops, then MPI_Finalize */
    GOL_PHASE_COUNT
} gol_phase;

/* Notes that the calling lane entered `phase`, waiting on `peer` where one rank is waited for (-1:
 * none, or several). The hook: when GOLMPI_DEBUG_HOLD names this phase and this rank, at its n-th
 * entry this prints "golmpi: debug: rank R holding at PHASE" to stderr and sleeps for ever (the
 * process's other threads go on). Local; never blocks but for the hook. */
void gol_phase_enter(gol_phase phase, int peer);
/* The writer lane is back waiting for a chunk (nothing of the output in flight). */
void gol_phase_writer_idle(void);
/* "exchange", "chunk_write" (the writer's lane after a " / " when it is in one: "handover /
 * chunk_end"), into buf. Any thread. */
void gol_phase_describe(char *buf, int len);
/* The phase's name, as the hook and the messages spell it. */
const char *gol_phase_name(gol_phase phase);
/* The main lane's phase now. Any thread. */
gol_phase gol_phase_now(void);

#endif
