#include "src/status.h"

#include <stdio.h>

gol_status gol_fail(int code, const char *fmt, ...) {
    gol_status s;
    s.code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s.msg, sizeof s.msg, fmt, ap);
    va_end(ap);
    return s;
}
