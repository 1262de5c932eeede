#include "io/format.h"

#include <stdio.h>

void output_chunk_name(const char *base, int64_t g0, int64_t g1, char *name, size_t len) {
    if (g0 == g1)
        snprintf(name, len, "%s_%06lld.h5", base, (long long)g0);
    else
        snprintf(name, len, "%s_%06lld-%06lld.h5", base, (long long)g0, (long long)g1);
}
