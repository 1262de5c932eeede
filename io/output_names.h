/* Every file name an output makes, derived once from its base ("<dir>/<stem>", --output minus
 * ".h5"): the writers build their names here, and the checks of the other options' files against
 * the output use the same table, so a name added to the output is checked at once (a --stats
 * naming the lock would otherwise make its JSON the output's lock). Chunk names follow
 * io/format.h's output_chunk_name. */
#ifndef GOLMPI_OUTPUT_NAMES_H
#define GOLMPI_OUTPUT_NAMES_H

#include <stdbool.h>
#include <stddef.h>

/* The files beside the chunks. */
typedef enum output_file {
    OUTPUT_INDEX,      /* <base>.h5 */
    OUTPUT_INDEX_PART, /* <base>.h5.part, while the index is rewritten */
    OUTPUT_XMF,        /* <base>.xmf */
    OUTPUT_XMF_PART,   /* <base>.xmf.part */
    OUTPUT_LOCK,       /* <base>.lock: one writer per output (io/output_guard.h) */
    OUTPUT_LOG,        /* <base>.log: each rank's fatal message, appended (core/check.h) */
    OUTPUT_NFILES
} output_file;

/* The name of one of them, into name (len bytes). */
void output_file_name(const char *base, output_file which, char *name, size_t len);

/* Which of the output's files `path` is ("the output's lock", "a chunk file's .part", ...): the
 * same file (inode) where both exist, else the same path once made absolute and free of symbolic
 * links; any chunk name of the stem counts, of this run or another, with or without ".part".
 * NULL: none of them. Local; reads only the file system's metadata. */
const char *output_name_of(const char *base, const char *path);

/* The same file: the same inode where both exist (hard links too), else the same canonical path. */
bool io_same_file(const char *a, const char *b);

#endif
