#include "io/output_names.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/config.h"
#include "io/format.h"

static const struct {
    const char *suffix, *what;
} files[OUTPUT_NFILES] = {
    [OUTPUT_INDEX] = {".h5", "the output index"},
    [OUTPUT_INDEX_PART] = {".h5.part", "the output index's .part"},
    [OUTPUT_XMF] = {".xmf", "the XDMF file"},
    [OUTPUT_XMF_PART] = {".xmf.part", "the XDMF file's .part"},
    [OUTPUT_LOCK] = {".lock", "the output's lock"},
    [OUTPUT_LOG] = {".log", "the output's log of fatal messages"},
};

void output_file_name(const char *base, output_file which, char *name, size_t len) {
    snprintf(name, len, "%s%s", base, files[which].suffix);
}

/* A path made absolute and free of symbolic links: the file itself where it exists, else its
 * directory (where that exists) and its name. Two paths that name one file come out equal. */
static void canonical_path(const char *path, char *out, size_t len) {
    char real[PATH_MAX], dir[GOL_PATH_MAX];
    const char *name;
    if (realpath(path, real)) {
        snprintf(out, len, "%s", real);
        return;
    }
    path_split(path, dir, sizeof dir, &name);
    snprintf(out, len, "%s/%s", realpath(dir, real) ? real : dir, name);
}

bool io_same_file(const char *a, const char *b) {
    struct stat sa, sb;
    if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    char ca[2 * GOL_PATH_MAX], cb[2 * GOL_PATH_MAX];
    canonical_path(a, ca, sizeof ca);
    canonical_path(b, cb, sizeof cb);
    return strcmp(ca, cb) == 0;
}

/* A chunk name of the stem, or its ".part": 1 for a chunk, 2 for a .part, 0 for neither. */
static int chunk_name_kind(const char *name, const char *stem) {
    char whole[GOL_PATH_MAX];
    size_t n = strlen(name);
    if (n > 5 && n < sizeof whole && strcmp(name + n - 5, ".part") == 0) {
        memcpy(whole, name, n - 5);
        whole[n - 5] = '\0';
        return output_is_chunk_name(whole, stem) ? 2 : 0;
    }
    return output_is_chunk_name(name, stem) ? 1 : 0;
}

const char *output_name_of(const char *base, const char *path) {
    char file[GOL_PATH_MAX + 16];
    for (int i = 0; i < OUTPUT_NFILES; i++) {
        output_file_name(base, (output_file)i, file, sizeof file);
        if (io_same_file(path, file)) return files[i].what;
    }
    char cp[2 * GOL_PATH_MAX], cbase[2 * GOL_PATH_MAX], pdir[2 * GOL_PATH_MAX];
    char bdir[2 * GOL_PATH_MAX];
    const char *pname, *stem;
    canonical_path(path, cp, sizeof cp);
    canonical_path(base, cbase, sizeof cbase);
    path_split(cp, pdir, sizeof pdir, &pname);
    path_split(cbase, bdir, sizeof bdir, &stem);
    if (strcmp(pdir, bdir) != 0) return NULL;
    static const char *const chunk_what[] = {NULL, "a chunk file", "a chunk file's .part"};
    return chunk_what[chunk_name_kind(pname, stem)];
}
