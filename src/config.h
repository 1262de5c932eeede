/* The run's configuration: filled by config_parse from the command line, then cross-checked.
 * Every rank parses the same argv, so every rank reaches the same verdict. */
#ifndef GOLMPI_CONFIG_H
#define GOLMPI_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "kernels/life_word.h"
#include "src/status.h"

#define GOL_PATH_MAX 4096

typedef enum { GOL_BOUNDARY_TORUS, GOL_BOUNDARY_DEAD } gol_boundary;
typedef enum { GOL_BACKEND_AUTO, GOL_BACKEND_CPU, GOL_BACKEND_CUDA } gol_backend_kind;
typedef enum { GOL_HALO_AUTO, GOL_HALO_MPI, GOL_HALO_NCCL } gol_halo_kind;
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
    gol_halo_kind halo;
    gol_frame_format frame_format;
    char restart[GOL_PATH_MAX];
    char stats[GOL_PATH_MAX];
    bool quiet;
    bool no_graphs; /* CUDA: launch per generation instead of replaying a CUDA graph */

    /* which of the above the user gave explicitly, so a pattern or restart file may fill the rest */
    bool size_given, rule_given, boundary_given;
} gol_config;

/* Parse argv into cfg. Returns GOL_OK, GOL_EXIT_DONE after --help/--version (text in *out_text,
 * which the caller prints on rank 0), or GOL_EXIT_USAGE with the reason in msg. */
gol_status config_parse(int argc, char **argv, gol_config *cfg, const char **out_text);

/* "B3/S23", "b36/s23", "S23/B3" or "23/3" (S/B digits) into masks; canonical text into out. */
gol_status rule_parse(const char *text, gol_rule *rule, char *out, size_t out_len);
void rule_format(gol_rule rule, char *out, size_t out_len);

const char *config_boundary_name(gol_boundary b);
const char *config_backend_name(gol_backend_kind b);
const char *config_halo_name(gol_halo_kind h);
const char *config_frame_format_name(gol_frame_format f); /* "u8" or "packed-lsb" */

/* "runs/life.h5" -> dir "runs", *name "life.h5"; "life.h5" -> "."; "/life.h5" -> "/". */
void path_split(const char *path, char *dir, size_t len, const char **name);

/* The base of the output name: "runs/life.h5" -> "runs/life". */
void config_output_base(const gol_config *cfg, char *base, size_t len);

#endif
