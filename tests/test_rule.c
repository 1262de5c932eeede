/* rule_parse and rule_format: every accepted spelling gives the exact masks and the canonical
 * text, and malformed rules fail as usage errors that name the bad text. */
#include <stdio.h>
#include <string.h>

#include "core/config.h"

#include "tests/expect.h"
#include "core/rule.h"

static uint16_t mask(const char *digits) {
    uint16_t m = 0;
    for (; *digits; digits++) m |= (uint16_t)(1u << (*digits - '0'));
    return m;
}

static void good(const char *text, const char *birth, const char *survive, const char *canon) {
    gol_rule r = {0xffff, 0xffff};
    char out[32] = "unset";
    gol_status st = rule_parse(text, &r, out, sizeof out);
    EXPECT(st.code == GOL_OK, "'%s' rejected: %s", text, st.msg);
    EXPECT(r.birth == mask(birth), "'%s': birth 0x%x, want 0x%x", text, r.birth, mask(birth));
    EXPECT(r.survive == mask(survive), "'%s': survive 0x%x, want 0x%x", text, r.survive,
           mask(survive));
    EXPECT(strcmp(out, canon) == 0, "'%s': canonical '%s', want '%s'", text, out, canon);
    /* the canonical text parses back to the same rule */
    gol_rule r2;
    char out2[32];
    st = rule_parse(out, &r2, out2, sizeof out2);
    EXPECT(st.code == GOL_OK && r2.birth == r.birth && r2.survive == r.survive &&
               strcmp(out2, out) == 0,
           "'%s' does not round-trip", out);
}

static void bad(const char *text, const char *needle) {
    gol_rule r = {0, 0};
    char out[32];
    gol_status st = rule_parse(text, &r, out, sizeof out);
    EXPECT(st.code == GOL_EXIT_USAGE, "'%s' accepted (code %d)", text, st.code);
    EXPECT(strstr(st.msg, needle) != NULL, "'%s': message '%s' lacks '%s'", text, st.msg, needle);
}

int main(void) {
    good("B3/S23", "3", "23", "B3/S23");
    good("b3/s23", "3", "23", "B3/S23");
    good("b36/s23", "36", "23", "B36/S23");
    good("S23/B3", "3", "23", "B3/S23");
    good("s23/b36", "36", "23", "B36/S23");
    good("23/3", "3", "23", "B3/S23");
    good("23/36", "36", "23", "B36/S23");
    good("B3/S", "3", "", "B3/S");
    good("B/S23", "", "23", "B/S23");
    good("B/S", "", "", "B/S");
    good("B63/S32", "36", "23", "B36/S23");          /* digits come out ascending */
    good("B012345678/S012345678", "012345678", "012345678", "B012345678/S012345678");
    good("B1357/S1357", "1357", "1357", "B1357/S1357"); /* Replicator */
    good("B2/S", "2", "", "B2/S");                    /* Seeds */
    good("B0/S8", "0", "8", "B0/S8");
    good("/2", "2", "", "B2/S");                      /* Seeds in S/B order */
    good("23/", "", "23", "B/S23");
    good("Life", "3", "23", "B3/S23");                /* names Golly and LifeWiki use */
    good("highlife", "36", "23", "B36/S23");
    good("Day & Night", "3678", "34678", "B3678/S34678");

    bad("B9/S23", "'9'");
    bad("B9/S23", "B9/S23");
    bad("B3/S239", "B3/S239");
    bad("", "empty");
    bad("B3", "'B3'");
    bad("B3/S23/x", "B3/S23/x");
    bad("B3/B23", "B3/B23");
    bad("S3/S23", "S3/S23");
    bad("B3/S2a", "'a'");
    bad("B3/S23:T64,64", "bounded");
    bad("Lifeish", "'Lifeish'");
    bad("B3 /S23", "B3 /S23");
    bad("X3/S23", "X3/S23");
    bad("B-3/S23", "'-'");
    bad("23/3a", "'a'");

    /* rule_format on its own, including a truncating buffer */
    char out[32];
    gol_rule conway = {GOL_RULE_CONWAY_BIRTH, GOL_RULE_CONWAY_SURVIVE};
    rule_format(conway, out, sizeof out);
    EXPECT(strcmp(out, "B3/S23") == 0, "format gave '%s'", out);
    gol_rule highlife = {mask("36"), mask("23")};
    rule_format(highlife, out, sizeof out);
    EXPECT(strcmp(out, "B36/S23") == 0, "format gave '%s'", out);
    char tiny[4];
    rule_format(highlife, tiny, sizeof tiny);
    EXPECT(strcmp(tiny, "B36") == 0, "truncated format gave '%s'", tiny);

    if (failures) fprintf(stderr, "%d failure(s)\n", failures);
    else printf("test_rule: all passed\n");
    return failures ? 1 : 0;
}
