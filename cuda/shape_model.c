#include "cuda/shape_model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/depth.h"
#include "core/life_word.h"
#include "cuda/cuda_pass_split.h"

/* The GPUs the model knows. alu_ipc and pass_s are the fit of one H200's measured curve
 * (bench/data/h200-2026-11-27/curve.tsv, `golmpi-model --fit`, the test model_fit) at lone_cpi
 * 2.4, which that curve cannot fix (one depth cannot tell a lone warp's pace from a pass's fixed
 * cost): the largest lone_cpi at which the curve's golmpi rows stay within 15% and the peer's
 * within 25% (2.5 puts the peer 25.8% off), chosen so because the shapes measured apart
 * (bench/data/h200-2026-11-28/shape_rates.tsv) run more passes of shorter chains and fall off
 * less the higher it is (the worst of them -52% at 1.73, -34% at 2.4), and because its pass
 * (11.5 us) meets the 12.5 us a pass that a model checked at depths 2 to 64 found (the curve's
 * notes); issue_ipc is the hardware's (a scheduler dispatches one warp-instruction a cycle);
 * gap_s is assumed (a queued launch's order of magnitude), neither measured nor fitted. The H100
 * SXM is the same SM (sm_90, 132 SMs) at its own clock. Clocks: the boost clock cudaDeviceProp
 * reports (H200 1980 MHz, H100 SXM 1980 MHz). */
typedef struct gpu_row {
    const char *key, *name_part;
    int sms, cc;
    double clock_hz;
} gpu_row;

static const gpu_row gpu_table[] = {
    {"h200", "H200", 132, 90, 1.98e9},
    {"h100", "H100", 132, 90, 1.98e9},
};

/* Fitted on the H200 (docs/PERFORMANCE.md, "The model of a pass"). */
#define FIT_LONE_CPI 2.4
#define FIT_ALU_IPC 0.40
#define FIT_PASS_S 11.5e-6
#define SM90_ISSUE_IPC 1.0
#define SM90_GAP_S 2e-6

static shape_model_gpu gpu_from_row(const gpu_row *r) {
    shape_model_gpu g;
    memset(&g, 0, sizeof g);
    snprintf(g.key, sizeof g.key, "%s", r->key);
    snprintf(g.name, sizeof g.name, "NVIDIA %s", r->name_part);
    g.sms = r->sms;
    g.clock_hz = r->clock_hz;
    g.cc = r->cc;
    g.schedulers = 4;
    g.lone_cpi = FIT_LONE_CPI;
    g.issue_ipc = SM90_ISSUE_IPC;
    g.alu_ipc = FIT_ALU_IPC;
    g.pass_s = FIT_PASS_S;
    g.gap_s = SM90_GAP_S;
    g.regs_per_sm = 65536;
    g.max_warps_sm = 64;
    g.max_blocks_sm = 32;
    g.reg_unit = 256;
    return g;
}

int shape_model_gpu_by_key(const char *key, shape_model_gpu *out) {
    for (size_t i = 0; i < sizeof gpu_table / sizeof gpu_table[0]; i++)
        if (key && strcmp(key, gpu_table[i].key) == 0) {
            *out = gpu_from_row(&gpu_table[i]);
            return 1;
        }
    return 0;
}

shape_model_gpu shape_model_gpu_for(const char *device_name, int sms, double clock_hz, int cc) {
    const gpu_row *row = &gpu_table[0]; /* the calibrated GPU, scaled, when none matches */
    int known = 0;
    for (size_t i = 0; i < sizeof gpu_table / sizeof gpu_table[0] && device_name; i++)
        if (strstr(device_name, gpu_table[i].name_part)) {
            row = &gpu_table[i];
            known = 1;
            break;
        }
    shape_model_gpu g = gpu_from_row(row);
    if (!known) snprintf(g.key, sizeof g.key, "scaled");
    snprintf(g.name, sizeof g.name, "%s", device_name ? device_name : "unknown");
    if (sms > 0) g.sms = sms;
    if (clock_hz > 0) g.clock_hz = clock_hz;
    if (cc > 0) g.cc = cc;
    /* a fixed cost a pass is mostly launch and event latency on the host's side: kept as is */
    return g;
}

const shape_model_instance *shape_model_instance_find(int cc, int k, int conway, int ragged,
                                                      int unroll) {
    const shape_model_instance *best = NULL;
    for (int i = 0; i < shape_model_instance_count; i++) {
        const shape_model_instance *r = &shape_model_instances[i];
        if (r->k != k || r->conway != conway || r->ragged != ragged || r->unroll != unroll)
            continue;
        if (!best || abs(r->cc - cc) < abs(best->cc - cc)) best = r;
    }
    return best;
}

/* Blocks of warps_block warps at regs registers a thread that one SM holds at once. */
static int blocks_per_sm(const shape_model_gpu *gpu, int regs, int warps_block) {
    const int unit = gpu->reg_unit > 0 ? gpu->reg_unit : 256;
    const int warp_regs = (regs * 32 + unit - 1) / unit * unit;
    int warps = warp_regs > 0 ? gpu->regs_per_sm / warp_regs : gpu->max_warps_sm;
    if (warps > gpu->max_warps_sm) warps = gpu->max_warps_sm;
    int blocks = warps / warps_block;
    if (blocks > gpu->max_blocks_sm) blocks = gpu->max_blocks_sm;
    return blocks;
}

/* Seconds of a launch whose `warps` busy warps each issue insts instructions (alu of them on the
 * integer ALU pipe) in one dependent chain, on sms SMs (a rank's share under MPS) holding
 * blocks_sm blocks of warps_block warps: the busiest SM, wave after wave; each wave as long as the
 * longer of a lone warp's chain and what one scheduler must issue for all its warps, at one
 * instruction a cycle and at the ALU pipe's rate, whichever binds. whole_waves: golmpi's grid is
 * whole waves (gol_deep_geometry); otherwise the last wave's share counts as a fraction. */
static double launch_seconds(const shape_model_gpu *gpu, double sms, int64_t warps, int warps_block,
                             int blocks_sm, double insts, double alu, int whole_waves) {
    if (warps <= 0 || insts <= 0) return 0;
    if (blocks_sm < 1) blocks_sm = 1;
    const double slots = (double)blocks_sm * warps_block * sms; /* warps resident at once */
    double per_sm = ceil((double)warps / sms);                  /* warps the busiest SM takes */
    double waves = 1, resident = per_sm;
    if (per_sm > (double)blocks_sm * warps_block) {
        resident = (double)blocks_sm * warps_block;
        waves = whole_waves ? ceil((double)warps / slots) : (double)warps / slots;
    }
    const double per_sched = ceil(resident / gpu->schedulers);
    const double shared = per_sched * fmax(insts / gpu->issue_ipc, alu / gpu->alu_ipc);
    const double cycles = fmax(insts * gpu->lone_cpi, shared);
    return waves * cycles / gpu->clock_hz;
}

/* Seconds of one deep launch of rows r, n generations, shape s. */
static double deep_seconds(const shape_model_gpu *gpu, const gol_cuda_grid *g, gol_rows r, int n,
                           int shape, int ranks, int conway, shape_model_guess *first) {
    if (r.lo >= r.hi) return 0;
    const int ragged = gol_deep_ragged(g);
    const shape_model_instance *in =
        shape_model_instance_find(gpu->cc, n, conway, ragged, gol_deep_unroll(shape, n, conway));
    if (!in) return -1;
    const int bsm = blocks_per_sm(gpu, in->regs, GOL_DEEP_WARPS);
    const int64_t resident = gol_resident_share((int64_t)bsm * gpu->sms, ranks);
    const gol_deep_launch d = gol_deep_geometry(g, r.lo, r.hi, n, shape, resident);
    const int64_t chain = d.cut.tile_rows + 2 * n;
    const double insts_row = (double)in->loop_insts / in->unroll;
    const double alu_row = (double)in->alu_insts / in->unroll;
    if (first && first->warps == 0) {
        first->regs = in->regs;
        first->blocks_sm = bsm;
        first->warps = d.launch.n;
        first->chain = chain;
        first->insts_row = insts_row;
        first->alu_row = alu_row;
    }
    return launch_seconds(gpu, (double)gpu->sms / (ranks > 0 ? ranks : 1), d.launch.n,
                          GOL_DEEP_WARPS, bsm, chain * insts_row, chain * alu_row, 1);
}

shape_model_guess shape_model_predict(const shape_model_gpu *gpu, const shape_model_slab *slab,
                                      int shape) {
    shape_model_guess out;
    memset(&out, 0, sizeof out);
    out.shape = shape;
    const int gens_max = gol_shapes[shape].gens_max;
    const int64_t depth = slab->depth > 0 ? slab->depth : 1;
    gol_cuda_grid g = {.rows = slab->rows,
                       .nwords = (slab->width + 63) / 64,
                       .width = slab->width,
                       .torus = slab->torus};
    /* one cycle of depth generations, in passes of up to gens_max (cuda/backend_cuda.c) */
    double cycle_s = 0;
    for (int64_t left = depth; left > 0;) {
        const int n = (int)(left < gens_max ? left : gens_max);
        const gol_pass ps = {.rows = slab->rows,
                             .halo_left = left,
                             .gens = n,
                             .dead_top = slab->dead_top != 0,
                             .dead_bottom = slab->dead_bottom != 0,
                             .tile = 0};
        double t;
        if (n < left || (ps.dead_top && ps.dead_bottom)) {
            t = deep_seconds(gpu, &g, pass_whole_rows(&ps, n), n, shape, slab->ranks, slab->conway,
                             &out);
        } else {
            const cuda_pass_rows c = cuda_pass_split(&ps, depth);
            const double in =
                deep_seconds(gpu, &g, c.interior, n, shape, slab->ranks, slab->conway, &out);
            const double b0 =
                deep_seconds(gpu, &g, c.band[0], n, shape, slab->ranks, slab->conway, NULL);
            const double b1 =
                deep_seconds(gpu, &g, c.band[1], n, shape, slab->ranks, slab->conway, NULL);
            t = in < 0 || b0 < 0 || b1 < 0 ? -1 : fmax(in, b0 + b1);
        }
        if (t < 0) return out; /* an instance the table lacks: unusable */
        cycle_s += t + gpu->pass_s;
        left -= n;
    }
    out.usable = 1;
    out.gen_s = cycle_s / (double)depth;
    out.rate = (double)slab->width * (double)slab->rows / out.gen_s;
    return out;
}

int shape_model_rank(const shape_model_gpu *gpu, const shape_model_slab *slab,
                     shape_model_guess out[GOL_SHAPE_COUNT]) {
    int usable = 0;
    for (int s = 0; s < GOL_SHAPE_COUNT; s++) {
        out[s] = shape_model_predict(gpu, slab, s);
        usable += out[s].usable;
    }
    /* insertion sort, stable: fastest first, unusable last in table order */
    for (int i = 1; i < GOL_SHAPE_COUNT; i++) {
        shape_model_guess x = out[i];
        int j = i - 1;
        while (j >= 0 && (x.usable > out[j].usable ||
                          (x.usable && out[j].usable && x.gen_s < out[j].gen_s))) {
            out[j + 1] = out[j];
            j--;
        }
        out[j + 1] = x;
    }
    return usable;
}

int shape_model_pick(const double gen_s[GOL_SHAPE_COUNT]) {
    int best = GOL_SHAPE_BASELINE;
    for (int s = 0; s < GOL_SHAPE_COUNT; s++)
        if (gen_s[s] > 0 && isfinite(gen_s[s]) && !(gen_s[best] > 0 && gen_s[s] >= gen_s[best]))
            best = s;
    const double base = gen_s[GOL_SHAPE_BASELINE];
    if (base > 0 && isfinite(base) && gen_s[best] * (1 + SHAPE_MODEL_MARGIN) > base)
        return GOL_SHAPE_BASELINE;
    return best;
}

double shape_model_foreign_rate(const shape_model_gpu *gpu, const shape_model_foreign *k) {
    const int wb = k->warps_block > 0 ? k->warps_block : 1;
    const int bsm = blocks_per_sm(gpu, k->regs, wb);
    const double t =
        launch_seconds(gpu, gpu->sms, k->warps, wb, bsm, k->insts_step * (double)k->steps,
                       k->alu_step * (double)k->steps, 0);
    return t > 0 ? k->cells * k->gens / (t + gpu->gap_s) : 0;
}
