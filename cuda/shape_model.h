/* The model of a pass's time: how fast each kernel shape (life_geometry.h's GOL_SHAPES) would run
 * a slab on a GPU, computed on the host from the build and a few constants of the GPU, with no
 * GPU at hand. Plain C with no CUDA types, built in every configuration.
 *
 * What it computes, per shape: the exact launches of a pass (cuda_pass_split's bands and
 * interior, gol_deep_geometry's grid and tiles, the launch share gol_resident_share gives a rank
 * under MPS), the blocks an SM holds at the instance's registers (shape_model_table.c, generated
 * from the build by tools/sass_rows.py), and per launch the time of its slowest SM: each warp a
 * chain of (tile + 2K) row-iterations of the instance's row-loop instructions, issued no faster
 * than a lone warp issues (latency bound) and no faster than the SM's schedulers issue all its
 * warps together (throughput bound: one instruction a cycle, and the loop's integer-ALU
 * instructions at the ALU pipe's rate), wave after wave; plus a fixed cost a pass. The constants
 * are calibrated on one H200's measured curve (bench/data/h200-2026-11-27/, golmpi-model --fit,
 * docs/PERFORMANCE.md). */
#ifndef GOLMPI_SHAPE_MODEL_H
#define GOLMPI_SHAPE_MODEL_H

#include <stdint.h>

#include "cuda/life_geometry.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One GPU's constants. */
typedef struct shape_model_gpu {
    char key[16];     /* the table's row ("h200", "h100"), or "scaled" */
    char name[96];    /* the CUDA device name it was built for */
    int sms;          /* streaming multiprocessors */
    double clock_hz;  /* the SM clock a kernel runs at */
    int cc;           /* compute capability x 10 (90: sm_90): which build table row applies */
    int schedulers;   /* warp schedulers an SM (4 on sm_70 and later) */
    double lone_cpi;  /* cycles between two instructions of one warp running alone */
    double issue_ipc; /* warp-instructions a cycle one scheduler dispatches, whatever the pipe */
    double alu_ipc;   /* integer-ALU warp-instructions a cycle one scheduler sustains with warps
                       * enough: the pipe that bounds the rule's loop (fitted) */
    double pass_s;    /* fixed cost of a golmpi pass: launches, events, the exchange's floor */
    double gap_s;     /* between two kernels queued back to back on one stream (a foreign
                       * kernel's launches): assumed, a queued launch's order of magnitude */
    int regs_per_sm, max_warps_sm, max_blocks_sm;
    int reg_unit; /* registers are given a warp in units of this many a thread x 32 */
} shape_model_gpu;

/* The constants of GPU `key` ("h200", "h100"): 1, or 0 for an unknown key. */
int shape_model_gpu_by_key(const char *key, shape_model_gpu *out);
/* The constants for the CUDA device called device_name (cudaDeviceProp.name, e.g. "NVIDIA
 * H200"), with sms SMs at clock_hz (0: the table's clock) and compute capability cc x 10: the
 * table's row whose name it contains, with these SMs and clock; otherwise the H200's per-SM
 * constants scaled to these SMs and clock (key "scaled"). Never fails. */
shape_model_gpu shape_model_gpu_for(const char *device_name, int sms, double clock_hz, int cc);

/* One rank's slab, as golmpi runs it. */
typedef struct shape_model_slab {
    int64_t width;             /* cells a row */
    int64_t rows;              /* owned rows */
    int depth;                 /* halo depth: generations a pass (1..64) */
    int torus;                 /* columns wrap */
    int conway;                /* B3/S23 (its own instantiation), or another rule */
    int dead_top, dead_bottom; /* no neighbour on that side (one rank with dead edges: both) */
    int ranks;                 /* ranks whose kernels share the GPU side by side (MPS); 1: alone */
} shape_model_slab;

/* A shape's predicted speed on a slab. */
typedef struct shape_model_guess {
    int shape;        /* gol_shape_id */
    int usable;       /* 0: no instance of this shape is in the build table for this GPU */
    double gen_s;     /* predicted seconds a generation (a pass's time / its generations) */
    double rate;      /* predicted cell updates a second of this rank's slab */
    int regs;         /* registers a thread of the interior's instance */
    int blocks_sm;    /* blocks of it an SM holds at once */
    int64_t warps;    /* warps with work in the interior's first launch */
    int64_t chain;    /* row-iterations a warp walks in that launch (tile + 2 K) */
    double insts_row; /* row-loop instructions a row-iteration of that instance */
    double alu_row;   /* of which on the integer ALU pipe */
} shape_model_guess;

/* Every shape's guess, sorted fastest first (unusable ones last, in table order); returns the
 * number of usable shapes. baseline is always usable when the table has its instances. */
int shape_model_rank(const shape_model_gpu *gpu, const shape_model_slab *slab,
                     shape_model_guess out[GOL_SHAPE_COUNT]);
/* The margin a shape's predicted time must beat baseline's by before the model alone takes it:
 * the model's error between shapes on measured data (docs/PERFORMANCE.md: within 15% for the
 * shapes it ranks first, where the shapes' own differences are 4-30%), so that a guess inside
 * that error never trades the measured shape for an untried one. */
#define SHAPE_MODEL_MARGIN 0.15

/* The shape the model alone takes from gen_s[shape] (seconds a generation; a shape with none is
 * infinite or <= 0): the fastest, if it beats baseline's time by SHAPE_MODEL_MARGIN, else
 * baseline. */
int shape_model_pick(const double gen_s[GOL_SHAPE_COUNT]);

/* One shape's guess. */
shape_model_guess shape_model_predict(const shape_model_gpu *gpu, const shape_model_slab *slab,
                                      int shape);

/* A kernel from outside golmpi, described by its launch alone, for checking the model on another
 * code's measured speed: warps a launch in blocks of warps_block, regs registers a thread, each
 * warp steps dependent steps of insts_step instructions (alu_step of them on the integer ALU
 * pipe); gens generations of cells cell updates a launch (cells: width x height). Returns the
 * predicted cell updates a second, launches back to back with gpu->gap_s between them. */
typedef struct shape_model_foreign {
    int64_t warps;
    int warps_block;
    int regs;
    double insts_step;
    double alu_step;
    int64_t steps;
    int gens;
    double cells;
} shape_model_foreign;
double shape_model_foreign_rate(const shape_model_gpu *gpu, const shape_model_foreign *k);

/* One kernel instance as the build made it: deep_kernel<k, conway, ragged, unroll> for compute
 * capability cc, its registers a thread (ptxas) and the instructions of its row loop (the
 * all-live tile's, from the SASS; alu_insts of them on the integer ALU pipe), which takes
 * `unroll` rows an iteration. The table is cuda/shape_model_table.c, written by
 * tools/sass_rows.py from a build's cubin; the test shape_model_table compares it with the
 * build. A shape runs the instance of its unroll (gol_deep_unroll). */
typedef struct shape_model_instance {
    int cc, k, conway, ragged, unroll;
    int regs, loop_insts, alu_insts;
} shape_model_instance;

extern const shape_model_instance shape_model_instances[];
extern const int shape_model_instance_count;
/* The toolkit and flags the table was generated with, for the check's message. */
extern const char shape_model_table_source[];
/* The instance for these parameters, at compute capability cc or else the table's nearest; NULL
 * when the table has none. */
const shape_model_instance *shape_model_instance_find(int cc, int k, int conway, int ragged,
                                                      int unroll);

#ifdef __cplusplus
}
#endif

#endif
