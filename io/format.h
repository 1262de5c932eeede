/* The names golmpi's output format is made of (DESIGN, Output), in one place for the writers of
 * chunk files and the index and for the reader: chunk file names and frame encodings. */
#ifndef GOLMPI_IO_FORMAT_H
#define GOLMPI_IO_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The root attribute "encoding" (also on /frames of packed files). */
#define IO_ENCODING_U8 "u8"
#define IO_ENCODING_PACKED "packed-lsb"

/* "<base>_000100-000400.h5", or "<base>_000000.h5" for a chunk of one frame. */
void output_chunk_name(const char *base, int64_t g0, int64_t g1, char *name, size_t len);

/* Is `name` (no directory) a chunk name of `stem`, "<stem>_<g0>.h5" or "<stem>_<g0>-<g1>.h5",
 * of this run or of any other run to the same output? */
bool output_is_chunk_name(const char *name, const char *stem);

/* A chunk's file name as a virtual dataset's source: HDF5 reads '%' there as the start of an
 * escape ("%b": the index's own name), so a literal '%' is written "%%" (H5Pset_virtual). */
size_t output_vds_source_name(const char *name, char *out, size_t len);

#endif
