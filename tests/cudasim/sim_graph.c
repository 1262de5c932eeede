/* The simulated GPU's graphs (tests/cudasim/sim.h): stream capture into a graph of lanes, and its
 * launch as that graph.
 *
 * A capture begins on its origin stream. Work enqueued on a capturing stream is kept, not run. An
 * event recorded on a capturing stream is a point of the capture; a stream that waits on such a
 * point joins the capture as a lane of its own (the fork), and the origin waiting on a point of
 * that lane is the join. The capture ends on its origin, on the thread that began it (thread-local
 * mode), and only when every lane was joined back; a synchronise or query on a capturing stream
 * invalidates it, and so does any unsafe call on the thread that began it (on every thread in
 * global mode: sim_capture_unsafe). An event last recorded in it stays refused after it ends
 * until recorded again. A launch runs the origin lane on the launch stream and each other lane on a
 * stream of the executable graph's own, with an event for each point: the same order as the
 * capture, and no more. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

enum { MAX_LANES = 8 };
enum item_kind { ITEM_OP, ITEM_RECORD, ITEM_WAIT };

typedef struct item {
    int lane;
    enum item_kind kind;
    sim_op *op; /* ITEM_OP */
    int point;  /* ITEM_RECORD, ITEM_WAIT: the capture's event point */
} item;

typedef struct sim_capture {
    struct CUstream_st *lane[MAX_LANES];
    int nlanes;
    pthread_t thread;
    enum cudaStreamCaptureMode mode;
    int invalid;
    item *items;
    int nitems, cap, npoints;
    int *point_lane, *point_item; /* where each point was recorded: its lane, the item before */
    struct CUevent_st **events;   /* recorded in it, each once per record */
} sim_capture;

struct CUgraph_st {
    item *items;
    int nitems, nlanes, npoints;
};

struct CUgraphExec_st {
    struct CUgraph_st g;
    struct CUstream_st *lane[MAX_LANES]; /* lane[0] is the launch stream's at each launch */
    cudaEvent_t *point;
    cudaEvent_t start;
    unsigned long long flags;
};

/* The capture this thread began in thread-local or global mode, and the captures in global mode
 * on any thread: CUDA forbids the potentially unsafe calls (sim_capture_unsafe) to the first, and
 * to every thread while one of the second lasts. */
static __thread sim_capture *capturing_here;
static int global_captures; /* under the lock */

/* Under the lock: an unsafe call (a query or synchronise of work outside the capture, an
 * allocation of device or pinned memory) on a thread that may not make one: refused with
 * cudaErrorStreamCaptureUnsupported, and the capture it would break is invalidated, as CUDA's
 * are. cudaSuccess where the call is allowed. */
cudaError_t sim_capture_unsafe(void) {
    if (capturing_here) {
        capturing_here->invalid = 1;
        return cudaErrorStreamCaptureUnsupported;
    }
    if (!global_captures) return cudaSuccess;
    for (int i = 0; i < sim.slots; i++) {
        struct CUstream_st *s = sim.streams[i];
        if (s && s->capture && s->capture->mode == cudaStreamCaptureModeGlobal)
            s->capture->invalid = 1;
    }
    return cudaErrorStreamCaptureUnsupported;
}

/* Under the lock: a call that synchronises the whole device (cudaDeviceSynchronize) while any of
 * its streams captures, from any thread and in any mode: refused, and every capture going on is
 * invalidated (CUDA Programming Guide, stream capture, "prohibited and unhandled operations": it
 * is invalid to synchronise "a broader handle which encompasses an active stream capture, such
 * as a device or context handle"). cudaSuccess where no stream captures. */
cudaError_t sim_capture_device_wide(void) {
    cudaError_t rc = cudaSuccess;
    for (int i = 0; i < sim.slots; i++) {
        struct CUstream_st *s = sim.streams[i];
        if (s && s->capture) {
            s->capture->invalid = 1;
            rc = cudaErrorStreamCaptureUnsupported;
        }
    }
    return rc;
}

/* The same, taking the lock: the error (also left for cudaGetLastError), or cudaSuccess. */
cudaError_t sim_capture_refuses(void) {
    sim_lock();
    cudaError_t e = sim_capture_unsafe();
    sim_unlock();
    return sim_error(e);
}

static item *add_item(sim_capture *c, int lane, enum item_kind kind) {
    if (c->nitems == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 64;
        c->items = realloc(c->items, (size_t)c->cap * sizeof *c->items);
    }
    item *it = &c->items[c->nitems++];
    *it = (item){.lane = lane, .kind = kind};
    return it;
}

int sim_capture_add(struct CUstream_st *s, sim_op *op) {
    if (!s->capture) return 0;
    if (op->kind == OP_NCCL) sim_nccl_captured(op->group);
    add_item(s->capture, s->lane, ITEM_OP)->op = op;
    return 1;
}

void sim_capture_invalidate(struct CUstream_st *s) {
    if (s->capture) s->capture->invalid = 1;
}

cudaError_t sim_capture_record(struct CUstream_st *s, struct CUevent_st *e) {
    sim_capture *c = s->capture;
    int k = c->npoints++;
    c->point_lane = realloc(c->point_lane, (size_t)c->npoints * sizeof(int));
    c->point_item = realloc(c->point_item, (size_t)c->npoints * sizeof(int));
    c->events = realloc(c->events, (size_t)c->npoints * sizeof *c->events);
    c->events[k] = e;
    c->point_lane[k] = s->lane;
    c->point_item[k] = c->nitems;
    add_item(c, s->lane, ITEM_RECORD)->point = k;
    e->capture = c;
    e->cap_lane = s->lane;
    e->cap_item = k;
    return cudaSuccess;
}

cudaError_t sim_capture_wait(struct CUstream_st *s, struct CUevent_st *e) {
    sim_capture *c = e->capture;
    if (!c) { /* a capturing stream waits on work outside the capture */
        sim_capture_invalidate(s);
        return cudaErrorStreamCaptureIsolation;
    }
    if (s->capture && s->capture != c) {
        sim_capture_invalidate(s);
        return cudaErrorStreamCaptureMerge;
    }
    if (!s->capture) { /* the fork: s joins the capture as a lane */
        if (c->nlanes == MAX_LANES) return cudaErrorStreamCaptureUnsupported;
        s->capture = c;
        s->lane = c->nlanes;
        c->lane[c->nlanes++] = s;
    }
    add_item(c, s->lane, ITEM_WAIT)->point = e->cap_item;
    return cudaSuccess;
}

cudaError_t cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode) {
    struct CUstream_st *s = sim_stream_of(stream);
    if (s == sim.null_stream) return sim_error(cudaErrorStreamCaptureUnsupported);
    sim_lock();
    if (s->capture) {
        sim_unlock();
        return sim_error(cudaErrorStreamCaptureUnsupported);
    }
    sim_capture *c = calloc(1, sizeof *c);
    c->lane[0] = s;
    c->nlanes = 1;
    c->thread = pthread_self();
    c->mode = mode;
    s->capture = c;
    s->lane = 0;
    if (mode == cudaStreamCaptureModeGlobal) global_captures++;
    sim_unlock();
    if (mode != cudaStreamCaptureModeRelaxed) capturing_here = c;
    return cudaSuccess;
}

cudaError_t cudaStreamIsCapturing(cudaStream_t stream, enum cudaStreamCaptureStatus *status) {
    struct CUstream_st *s = sim_stream_of(stream);
    sim_lock();
    *status = !s->capture           ? cudaStreamCaptureStatusNone
              : s->capture->invalid ? cudaStreamCaptureStatusInvalidated
                                    : cudaStreamCaptureStatusActive;
    sim_unlock();
    return cudaSuccess;
}

/* Every lane but the origin must end in a point that a later wait on another lane takes. */
static int unjoined(const sim_capture *c) {
    for (int l = 1; l < c->nlanes; l++) {
        int last = -1;
        for (int i = 0; i < c->nitems; i++)
            if (c->items[i].lane == l) last = i;
        if (last < 0 || c->items[last].kind != ITEM_RECORD) return 1;
        int point = c->items[last].point, taken = 0;
        for (int i = last + 1; i < c->nitems; i++)
            if (c->items[i].kind == ITEM_WAIT && c->items[i].point == point &&
                c->items[i].lane != l)
                taken = 1;
        if (!taken) return 1;
    }
    return 0;
}

static void free_items(item *items, int n) {
    for (int i = 0; i < n; i++)
        if (items[i].op) {
            free(items[i].op->arg);
            if (items[i].op->group) sim_nccl_group_free(items[i].op->group);
            free(items[i].op);
        }
    free(items);
}

cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *graph) {
    struct CUstream_st *s = sim_stream_of(stream);
    sim_lock();
    sim_capture *c = s->capture;
    cudaError_t rc = cudaSuccess;
    if (!c)
        rc = cudaErrorInvalidValue;
    else if (c->lane[0] != s)
        rc = cudaErrorStreamCaptureUnmatched;
    else if (c->mode != cudaStreamCaptureModeRelaxed && !pthread_equal(c->thread, pthread_self()))
        rc = cudaErrorStreamCaptureWrongThread;
    if (rc != cudaSuccess) {
        sim_unlock();
        return sim_error(rc);
    }
    if (c->invalid)
        rc = cudaErrorStreamCaptureInvalidated;
    else if (unjoined(c))
        rc = cudaErrorStreamCaptureUnjoined;
    for (int l = 0; l < c->nlanes; l++)
        c->lane[l]->capture = NULL;
    if (capturing_here == c) capturing_here = NULL;
    if (c->mode == cudaStreamCaptureModeGlobal) global_captures--;
    *graph = NULL;
    if (rc == cudaSuccess) {
        *graph = calloc(1, sizeof **graph);
        **graph = (struct CUgraph_st){
            .items = c->items, .nitems = c->nitems, .nlanes = c->nlanes, .npoints = c->npoints};
    } else {
        free_items(c->items, c->nitems);
    }
    /* an event last recorded in the capture stays unusable outside it (cudaErrorInvalidValue, as
     * an H200 with CUDA 13 answers)
     * until recorded again */
    for (int k = 0; k < c->npoints; k++)
        if (c->events[k]->capture == c) {
            c->events[k]->capture = NULL;
            c->events[k]->captured_last = 1;
        }
    free(c->events);
    free(c->point_lane);
    free(c->point_item);
    free(c);
    sim_unlock();
    return sim_error(rc);
}

static sim_op *op_copy(const sim_op *op) {
    sim_op *o = malloc(sizeof *o);
    *o = *op;
    o->next = NULL;
    o->after = NULL;
    o->nafter = 0;
    if (op->arg) {
        o->arg = malloc(op->arg_bytes ? op->arg_bytes : 1);
        memcpy(o->arg, op->arg, op->arg_bytes);
    }
    if (op->group) o->group = sim_nccl_group_copy(op->group);
    return o;
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t *exec, cudaGraph_t graph,
                                 unsigned long long flags) {
    if (!graph) return sim_error(cudaErrorInvalidValue);
    struct CUgraphExec_st *x = calloc(1, sizeof *x);
    x->flags = flags;
    x->g = *graph;
    x->g.items = malloc((size_t)(graph->nitems ? graph->nitems : 1) * sizeof(item));
    for (int i = 0; i < graph->nitems; i++) {
        x->g.items[i] = graph->items[i];
        if (graph->items[i].op) x->g.items[i].op = op_copy(graph->items[i].op);
    }
    for (int l = 1; l < graph->nlanes; l++)
        x->lane[l] = sim_stream_new(0, cudaStreamNonBlocking, 1);
    x->point = calloc((size_t)graph->npoints + 1, sizeof *x->point);
    for (int k = 0; k < graph->npoints; k++)
        cudaEventCreateWithFlags(&x->point[k], cudaEventDisableTiming);
    cudaEventCreateWithFlags(&x->start, cudaEventDisableTiming);
    *exec = x;
    return cudaSuccess;
}

cudaError_t cudaGraphUpload(cudaGraphExec_t exec, cudaStream_t s) {
    (void)s;
    return exec ? cudaSuccess : sim_error(cudaErrorInvalidValue);
}

/* One submission: the launch takes one entry of the launch queue, which its last node, on the
 * launch stream after every lane has joined it, frees. */
cudaError_t cudaGraphLaunch(cudaGraphExec_t x, cudaStream_t stream) {
    if (!x) return sim_error(cudaErrorInvalidValue);
    struct CUstream_st *s = sim_stream_of(stream);
    struct CUstream_st *lane[MAX_LANES];
    lane[0] = s;
    for (int l = 1; l < x->g.nlanes; l++)
        lane[l] = x->lane[l];
    sim_lock();
    if (s->capture) { /* not nested here */
        sim_unlock();
        return sim_error(cudaErrorStreamCaptureUnsupported);
    }
    sim_queue_take();
    sim.graph_launch = 1;
    sim_event_record(s, x->start); /* the lanes begin after what the stream holds */
    for (int l = 1; l < x->g.nlanes; l++)
        sim_stream_wait_event(lane[l], x->start);
    for (int i = 0; i < x->g.nitems; i++) {
        const item *it = &x->g.items[i];
        if (it->kind == ITEM_RECORD)
            sim_event_record(lane[it->lane], x->point[it->point]);
        else if (it->kind == ITEM_WAIT)
            sim_stream_wait_event(lane[it->lane], x->point[it->point]);
        else
            sim_enqueue(lane[it->lane], op_copy(it->op));
    }
    sim_op *end = calloc(1, sizeof *end);
    end->kind = OP_MARK;
    end->what = "the end of a graph launch";
    end->holds_slot = 1;
    sim_enqueue(s, end);
    sim.graph_launch = 0;
    sim_unlock();
    return cudaSuccess;
}

cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
    if (!graph) return sim_error(cudaErrorInvalidValue);
    free_items(graph->items, graph->nitems);
    free(graph);
    return cudaSuccess;
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t x) {
    if (!x) return sim_error(cudaErrorInvalidValue);
    for (int l = 1; l < x->g.nlanes; l++) {
        sim_stream_free(x->lane[l]);
    }
    for (int k = 0; k < x->g.npoints; k++)
        cudaEventDestroy(x->point[k]);
    cudaEventDestroy(x->start);
    free(x->point);
    free_items(x->g.items, x->g.nitems);
    free(x);
    return cudaSuccess;
}
