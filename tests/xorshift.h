/* The C tests' random numbers: Marsaglia's xorshift64, one step of a state the test keeps (its
 * own seed, so each test's cases stay the same run after run). */
#ifndef GOLMPI_TESTS_XORSHIFT_H
#define GOLMPI_TESTS_XORSHIFT_H

#include <stdint.h>

static inline uint64_t xorshift64(uint64_t *state) {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return *state;
}

#endif
