#include "core/quote.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

size_t gol_escape(char *dst, size_t len, const char *src) {
    return gol_escape_n(dst, len, src, strlen(src));
}

size_t gol_escape_n(char *dst, size_t len, const char *src, size_t count) {
    size_t n = 0;
    if (len == 0) return 0;
    const unsigned char *s = (const unsigned char *)src;
    for (; count > 0; count--, s++) {
        bool plain = *s >= 0x20 && *s <= 0x7e;
        size_t need = plain ? 1 : 4;
        if (n + need >= len) break;
        if (plain)
            dst[n] = (char)*s;
        else
            snprintf(dst + n, 5, "\\x%02x", *s);
        n += need;
    }
    dst[n] = '\0';
    return n;
}

gol_quoted gol_quote(const char *src) {
    gol_quoted q;
    gol_escape(q.s, sizeof q.s, src ? src : "(null)");
    return q;
}

gol_quoted gol_quote_n(const char *src, size_t n) {
    gol_quoted q;
    gol_escape_n(q.s, sizeof q.s, src, n);
    return q;
}
