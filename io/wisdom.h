/* The wisdom file: what a GPU measured about a kind of run, kept between runs, as FFTW keeps its
 * wisdom (cuda/shape_choice.h writes and reads the kernel shape's records). One record a line,
 * text a person can read:
 *
 *   wisdom1<TAB>WHERE<TAB>WHAT<TAB>WEIGHT<TAB>VALUE<TAB>fnv=CHECKSUM
 *
 * WHERE names the machine and the build (GPU, driver, runtime, golmpi's version and commit),
 * WHAT the run (slab, rule class, boundary, depth), VALUE what was learnt; none holds a tab or a
 * newline. WEIGHT says how much was measured (shapes timed): a record is replaced only by one of
 * the same WHERE and WHAT and at least its weight, never by less. The checksum (FNV-1a of the
 * line before it) tells a corrupt or truncated line, which is ignored; a line of another format
 * version is kept as it is.
 *
 * Written whole: under a lock file (flock on PATH.lock) the file is read again, merged, written
 * to a temporary file in the same directory and renamed over it, so two jobs writing at once lose
 * no record and a reader never sees half a file. A file or directory golmpi may not write is read
 * and left alone. Nothing here is fatal: each fault is said once in the notice text. Not
 * collective; one rank calls it. */
#ifndef GOLMPI_WISDOM_H
#define GOLMPI_WISDOM_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { WISDOM_FIELD_MAX = 512 };

typedef struct wisdom_notice {
    char text[2048]; /* each fault once, a line each (no trailing newline); "" when none */
} wisdom_notice;

/* The wisdom file's path: option (--wisdom: "" for the default, "off", or a path), else
 * GOLMPI_WISDOM, else $XDG_CACHE_HOME/golmpi/wisdom, else $HOME/.cache/golmpi/wisdom. Returns
 * false when there is none ("off", or no HOME). */
bool wisdom_path(const char *option, char *path, size_t len);

/* The record of WHERE and WHAT in the file at path: true, with its VALUE in value. A record of the
 * same WHAT but another WHERE (another GPU, driver or build) and corrupt lines are noticed. */
bool wisdom_find(const char *path, const char *where, const char *what, char *value,
                 size_t value_len, wisdom_notice *notice);

/* Adds or replaces the records where[i], what[i] (n of them) with value and weight, the rest of
 * the file kept, as the header says. Returns true when the file now holds them. */
bool wisdom_put(const char *path, const char *const *where, const char *const *what, int n,
                const char *value, int weight, wisdom_notice *notice);

/* Copies s into out with tabs and newlines made spaces, so it can stand in a field. */
void wisdom_field(const char *s, char *out, size_t len);

#ifdef __cplusplus
}
#endif

#endif
