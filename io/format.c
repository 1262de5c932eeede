#include "io/format.h"

#include <stdio.h>
#include <string.h>

void output_chunk_name(const char *base, int64_t g0, int64_t g1, char *name, size_t len) {
    if (g0 == g1)
        snprintf(name, len, "%s_%06lld.h5", base, (long long)g0);
    else
        snprintf(name, len, "%s_%06lld-%06lld.h5", base, (long long)g0, (long long)g1);
}

bool output_is_chunk_name(const char *name, const char *stem) {
    size_t n = strlen(stem);
    if (strncmp(name, stem, n) != 0 || name[n] != '_') return false;
    const char *p = name + n + 1;
    size_t d = strspn(p, "0123456789");
    if (d == 0) return false;
    p += d;
    if (*p == '-') {
        d = strspn(p + 1, "0123456789");
        if (d == 0) return false;
        p += 1 + d;
    }
    return strcmp(p, ".h5") == 0;
}

size_t output_vds_source_name(const char *name, char *out, size_t len) {
    size_t n = 0;
    for (const char *c = name; *c; c++) {
        if (*c == '%' && n + 1 < len) out[n++] = '%';
        if (n + 1 < len) out[n++] = *c;
    }
    if (len) out[n] = '\0';
    return n;
}
