/* Life-like rules: "B3/S23" and its common spellings into two 9-bit masks, and back. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "core/rule.h"

/* One half of a rule ("B36", "s23", or plain digits). Fails on any character but a digit 0-8. */
static gol_status parse_digits(const char *rule_text, const char *s, size_t n, uint16_t *mask) {
    *mask = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '9')
            return gol_fail(GOL_EXIT_USAGE,
                            "rule '%s': '9' is not a neighbour count (a cell has 8 neighbours, "
                            "so digits run 0-8)",
                            rule_text);
        if (c < '0' || c > '8')
            return gol_fail(GOL_EXIT_USAGE,
                            "rule '%s': unexpected '%c'; expected the form B3/S23, S23/B3 or 23/3 "
                            "(digits 0-8)",
                            rule_text, c);
        *mask |= (uint16_t)(1u << (c - '0'));
    }
    return gol_ok();
}

/* Names that Golly and LifeWiki use for well-known Life-like rules; RLE headers carry them too. */
static const gol_named_rule named_rules[] = {
    {"Life", "B3/S23"},           {"Conway", "B3/S23"},        {"HighLife", "B36/S23"},
    {"Seeds", "B2/S"},            {"DayAndNight", "B3678/S34678"},
    {"Day & Night", "B3678/S34678"}, {"LifeWithoutDeath", "B3/S012345678"},
    {"Maze", "B3/S12345"},        {"Replicator", "B1357/S1357"}, {"2x2", "B36/S125"},
    {"Diamoeba", "B35678/S5678"}, {"Morley", "B368/S245"},     {"Anneal", "B4678/S35678"},
};

const gol_named_rule *rule_names(size_t *n) {
    *n = sizeof named_rules / sizeof *named_rules;
    return named_rules;
}

gol_status rule_parse(const char *text, gol_rule *rule, char *out, size_t out_len) {
    if (!text || !*text)
        return gol_fail(GOL_EXIT_USAGE, "rule: empty; expected the form B3/S23");
    for (size_t i = 0; i < sizeof named_rules / sizeof *named_rules; i++)
        if (strcasecmp(text, named_rules[i].name) == 0)
            return rule_parse(named_rules[i].rule, rule, out, out_len);
    if (strlen(text) > 40)
        return gol_fail(GOL_EXIT_USAGE, "rule '%.40s...': too long; expected the form B3/S23",
                        text);
    const char *slash = strchr(text, '/');
    if (!slash || strchr(slash + 1, '/'))
        return gol_fail(GOL_EXIT_USAGE,
                        "rule '%s': expected two parts separated by one '/', as in B3/S23, "
                        "S23/B3 or 23/3",
                        text);
    if (strchr(text, ':'))
        return gol_fail(GOL_EXIT_USAGE,
                        "rule '%s': a bounded-grid suffix (':T...') belongs in a pattern file's "
                        "header, not on the command line; use --boundary and --size",
                        text);

    const char *a = text, *b = slash + 1;
    size_t alen = (size_t)(slash - text), blen = strlen(b);
    char ta = (char)toupper((unsigned char)a[0]), tb = (char)toupper((unsigned char)b[0]);
    uint16_t birth, survive;

    if ((ta == 'B' || ta == 'S') && (tb == 'B' || tb == 'S')) {
        if (ta == tb)
            return gol_fail(GOL_EXIT_USAGE, "rule '%s': both parts start with '%c'; one must be "
                            "B (birth) and the other S (survival)", text, ta);
        const char *bp = ta == 'B' ? a : b, *sp = ta == 'B' ? b : a;
        size_t bn = ta == 'B' ? alen : blen, sn = ta == 'B' ? blen : alen;
        GOL_TRY(parse_digits(text, bp + 1, bn - 1, &birth));
        GOL_TRY(parse_digits(text, sp + 1, sn - 1, &survive));
    } else if ((alen == 0 || isdigit((unsigned char)a[0])) &&
               (blen == 0 || isdigit((unsigned char)b[0]))) {
        /* The old Life 1.05 / MCell order: survival digits first, then birth. */
        GOL_TRY(parse_digits(text, a, alen, &survive));
        GOL_TRY(parse_digits(text, b, blen, &birth));
    } else {
        return gol_fail(GOL_EXIT_USAGE,
                        "rule '%s': expected the form B3/S23, S23/B3 or 23/3 (digits 0-8)", text);
    }

    rule->birth = birth;
    rule->survive = survive;
    if (out && out_len) rule_format(*rule, out, out_len);
    return gol_ok();
}

void rule_format(gol_rule rule, char *out, size_t out_len) {
    char buf[32];
    size_t n = 0;
    buf[n++] = 'B';
    for (int d = 0; d <= 8; d++)
        if ((rule.birth >> d) & 1) buf[n++] = (char)('0' + d);
    buf[n++] = '/';
    buf[n++] = 'S';
    for (int d = 0; d <= 8; d++)
        if ((rule.survive >> d) & 1) buf[n++] = (char)('0' + d);
    buf[n] = '\0';
    snprintf(out, out_len, "%s", buf);
}
