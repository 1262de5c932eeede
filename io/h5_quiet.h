/* HDF5 prints its error stack at every failed call. Where io/ judges a user's file (restart, the
 * reader, the read-back before a rename, a series to continue), a fault is reported once, by our
 * own message, so the printing is off between io_quiet_begin and io_quiet_end. */
#ifndef GOLMPI_IO_H5_QUIET_H
#define GOLMPI_IO_H5_QUIET_H

#include <hdf5.h>

#include "core/check.h"

typedef struct io_h5_quiet {
    H5E_auto2_t func;
    void *data;
} io_h5_quiet;

static inline io_h5_quiet io_quiet_begin(void) {
    io_h5_quiet q;
    H5_CHECK(H5Eget_auto2(H5E_DEFAULT, &q.func, &q.data));
    H5_CHECK(H5Eset_auto2(H5E_DEFAULT, NULL, NULL));
    return q;
}

static inline void io_quiet_end(io_h5_quiet q) {
    H5_CHECK(H5Eset_auto2(H5E_DEFAULT, q.func, q.data));
}

#endif
