/* libFuzzer target for the pattern readers: every input goes through both pattern_parse_rle and
 * pattern_parse_cells, as pattern_load may hand a file of either kind to either reader. Besides
 * what the sanitizers catch, a reader must keep its contract: a failure carries a message and
 * leaves nothing allocated, and a success holds a grid of the stated size whose padding bits
 * (past the width, up to the word) are 0, as the grid's own rows must be. tests/fuzz_run.sh
 * builds it with clang and runs it under ctest. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/rule.h"
#include "src/pattern.h"

static void fail(const char *reader, const char *why) {
    fprintf(stderr, "fuzz_pattern: %s: %s\n", reader, why);
    abort(); /* libFuzzer keeps the input as a crash */
}

static void check_rule(const char *reader, const gol_pattern *p) {
    if ((p->rule.birth | p->rule.survive) >> 9) fail(reader, "rule mask beyond 8 neighbours");
    gol_rule again;
    char text[32];
    if (rule_parse(p->rule_text, &again, text, sizeof text).code != GOL_OK ||
        again.birth != p->rule.birth || again.survive != p->rule.survive)
        fail(reader, "rule_text does not read back as the same rule");
}

static void check_pattern(const char *reader, const gol_pattern *p) {
    if (p->width < 1 || p->height < 1 || !p->bits) fail(reader, "success with an empty grid");
    if (p->nwords != (p->width + 63) / 64) fail(reader, "nwords does not match the width");
    if (p->has_rule) check_rule(reader, p);
    if (p->has_grid && (p->grid_width < 1 || p->grid_height < 1))
        fail(reader, "bounded grid with a side below 1");
    int64_t tail = p->width % 64;
    if (tail == 0) return;
    uint64_t padding = ~(uint64_t)0 << tail;
    for (int64_t y = 0; y < p->height; y++)
        if (p->bits[y * p->nwords + p->nwords - 1] & padding) fail(reader, "padding bit set");
}

static void run_reader(const char *reader, gol_status (*parse)(const char *, size_t, gol_pattern *),
                       const uint8_t *data, size_t size) {
    gol_pattern p;
    gol_status st = parse((const char *)data, size, &p);
    if (st.code == GOL_OK) {
        check_pattern(reader, &p);
        pattern_free(&p);
        return;
    }
    if (st.msg[0] == '\0') fail(reader, "failure without a message");
    if (p.bits) fail(reader, "failure left the grid allocated");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    run_reader("pattern_parse_rle", pattern_parse_rle, data, size);
    run_reader("pattern_parse_cells", pattern_parse_cells, data, size);
    return 0;
}
