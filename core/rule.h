/* Life-like rules as text: "B3/S23" and its common spellings into two 9-bit masks, and back. */
#ifndef GOLMPI_RULE_H
#define GOLMPI_RULE_H

#include <stddef.h>

#include "core/life_word.h"
#include "core/status.h"

/* "B3/S23", "b36/s23", "S23/B3", "23/3" (S/B digits) or a name Golly and LifeWiki use ("Life",
 * "HighLife", ...) into masks; the canonical text into out. */
gol_status rule_parse(const char *text, gol_rule *rule, char *out, size_t out_len);
void rule_format(gol_rule rule, char *out, size_t out_len);

/* The names rule_parse accepts (in any case), each with its B/S text; *n gets their count. For
 * --help and its tests, so the list lives in one place. */
typedef struct gol_named_rule {
    const char *name, *rule;
} gol_named_rule;
const gol_named_rule *rule_names(size_t *n);

#endif
