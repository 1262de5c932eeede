/* libFuzzer target for the rule parser: the input, as a C string (up to its first NUL), through
 * rule_parse, as --rule and an RLE header's "rule =" hand it over. Besides what the sanitizers
 * catch: a failure carries a message; a success gives masks within 9 bits whose canonical text
 * reads back as the same rule, and a short output buffer is cut, never overrun.
 * tests/fuzz_run.sh builds it with clang and runs it under ctest. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/rule.h"

static void fail(const char *text, const char *why) {
    fprintf(stderr, "fuzz_rule: rule '%s': %s\n", text, why);
    abort(); /* libFuzzer keeps the input as a crash */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';

    gol_rule rule = {0}, again = {0};
    char out[32], back[32];
    gol_status st = rule_parse(text, &rule, out, sizeof out);
    if (st.code != GOL_OK) {
        if (st.msg[0] == '\0') fail(text, "failure without a message");
    } else {
        if ((rule.birth | rule.survive) >> 9) fail(text, "mask beyond 8 neighbours");
        if (rule_parse(out, &again, back, sizeof back).code != GOL_OK ||
            again.birth != rule.birth || again.survive != rule.survive || strcmp(out, back))
            fail(text, "the canonical text does not read back as the same rule");
        /* the length of a short buffer comes from the input, so ASan sees every size */
        size_t short_len = size ? (size_t)data[0] % sizeof out : 0;
        char *small = malloc(short_len ? short_len : 1);
        if (small && rule_parse(text, &again, small, short_len).code != GOL_OK)
            fail(text, "a shorter output buffer changed the verdict");
        free(small);
    }
    free(text);
    return 0;
}
