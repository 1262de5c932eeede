/* Text from outside (a file's bytes, a user's argument, a lock's contents) made safe to print in
 * a message: a terminal must never receive an escape sequence, a carriage return or binary junk
 * through golmpi's messages (an RLE header holding "ESC ] 0 ;" would retitle the terminal).
 * Every byte outside printable ASCII (0x20..0x7e) becomes "\xNN"; nothing else changes. */
#ifndef GOLMPI_QUOTE_H
#define GOLMPI_QUOTE_H

#include <stddef.h>

/* Writes src, escaped, into dst (len bytes, NUL-terminated), cut where it would not fit (never
 * inside an escape). Returns the bytes written, the NUL excluded. dst and src must not overlap. */
size_t gol_escape(char *dst, size_t len, const char *src);
/* The same for n bytes of src, NUL bytes among them ("\x00"): a file's contents. */
size_t gol_escape_n(char *dst, size_t len, const char *src, size_t n);

/* One escaped string, cut to fit, to pass as a printf argument: gol_quote(arg).s lives until the
 * end of the full expression that holds the call. */
typedef struct gol_quoted {
    char s[256];
} gol_quoted;
gol_quoted gol_quote(const char *src);
gol_quoted gol_quote_n(const char *src, size_t n);

#endif
