/* Writes golmpi.1, the man page, from src/options.c's option table and exit codes: CMake runs it
 * at build time, so the page cannot drift from --help. */
#include <stdio.h>

#include "src/options.h"

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: golmpi_man OUT.1\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "w");
    if (!f || fputs(options_man_page(), f) < 0 || fclose(f) != 0) {
        perror(argv[1]);
        return 1;
    }
    return 0;
}
