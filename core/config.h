/* core/ is the ground that every folder shares: checks, status, this configuration type, the slab,
 * the schedule, the rule and bit-row layout, tracing; it includes no other folder.
 *
 * The run's configuration: what every layer may read about the run. The program fills it from the
 * command line (src/options.h); backend/, cpu/, cuda/, halo/ and io/ only read. */
#ifndef GOLMPI_CONFIG_H
#define GOLMPI_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "core/life_word.h"
#include "core/status.h"

#define GOL_PATH_MAX 4096

typedef enum { GOL_BOUNDARY_TORUS, GOL_BOUNDARY_DEAD } gol_boundary;
typedef enum { GOL_BACKEND_AUTO, GOL_BACKEND_CPU, GOL_BACKEND_CUDA } gol_backend_kind;
typedef enum { GOL_FRAME_U8, GOL_FRAME_PACKED } gol_frame_format;

typedef struct gol_config {
    int64_t width, height; /* cells */
    int64_t steps;         /* generations to advance from the start state */
    int64_t save_every;    /* a frame every K generations (plus the first and the last) */
    int64_t chunk;         /* frames per chunk file */
    char output[GOL_PATH_MAX]; /* "<base>.h5": the index; chunks are <base>_<g0>-<g1>.h5 */
    bool no_output;
    bool force; /* replace existing output files of the same names */
    uint64_t seed;
    double density;
    char pattern[GOL_PATH_MAX]; /* empty: random start */
    bool at_given;
    int64_t at_x, at_y; /* pattern's top-left cell; centred when !at_given */
    gol_rule rule;
    char rule_text[32]; /* canonical "B3/S23" */
    gol_boundary boundary;
    gol_backend_kind backend;
    char halo[16]; /* "auto" or a mode name of the table in halo/halo.c */
    int64_t halo_depth; /* halo rows, exchanged every that many generations; 0: auto (core/depth.h) */
    gol_frame_format frame_format;
    char restart[GOL_PATH_MAX];
    char stats[GOL_PATH_MAX];
    bool profile; /* a line per chunk as it is written (src/chunk_log.h) */
    bool quiet;
    double progress_s; /* seconds between progress lines when stderr is not a terminal; 0: none */
    bool no_graphs; /* CUDA: launch per generation instead of replaying a CUDA graph */
    char kernel[16]; /* CUDA: "auto" or a shape of cuda/life_geometry.h's GOL_SHAPES */
    bool tune; /* CUDA: time every kernel shape, record it in the wisdom, print it, run nothing */
    char wisdom[GOL_PATH_MAX]; /* the wisdom file (io/wisdom.h); "" the default; "off": none */
    double timeout_s; /* seconds to wait on a peer (halo, NCCL) before aborting; 0: forever */
    bool dry_run;     /* check everything, print the plan, run nothing and write nothing */

    /* which of the above the user gave explicitly, so a pattern or restart file may fill the rest */
    bool size_given, rule_given, boundary_given;
} gol_config;

const char *config_boundary_name(gol_boundary b);
const char *config_backend_name(gol_backend_kind b);
const char *config_frame_format_name(gol_frame_format f); /* "u8" or "packed-lsb" */

/* "runs/life.h5" -> dir "runs", *name "life.h5"; "life.h5" -> "."; "/life.h5" -> "/". */
void path_split(const char *path, char *dir, size_t len, const char **name);

/* The base of the output name: "runs/life.h5" -> "runs/life". */
void config_output_base(const gol_config *cfg, char *base, size_t len);

/* Bytes of one frame row in a given format. */
static inline int64_t frame_row_bytes(int64_t width, gol_frame_format fmt) {
    return fmt == GOL_FRAME_PACKED ? (width + 7) / 8 : width;
}

#endif
