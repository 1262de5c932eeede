/* EXPECT for the C unit tests: count a failure, say where and why, go on to the next check. */
#ifndef GOLMPI_TESTS_EXPECT_H
#define GOLMPI_TESTS_EXPECT_H

#include <stdio.h>

static int failures = 0;

#define EXPECT(cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            failures++;                                                                            \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                        \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

/* EXPECT_EQ(got, want, ...): two integers; a failure also prints the expected and the actual
 * value, after the context that the printf-style arguments give. */
#define EXPECT_EQ(got, want, ...)                                                                  \
    do {                                                                                           \
        long long got_ = (long long)(got), want_ = (long long)(want);                              \
        if (got_ != want_) {                                                                       \
            failures++;                                                                            \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                   \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, ": %s: expected %lld, got %lld\n", #got, want_, got_);                 \
        }                                                                                          \
    } while (0)

#endif
