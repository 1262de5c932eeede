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

#endif
