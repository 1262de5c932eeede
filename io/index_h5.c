/* The index "<base>.h5": one virtual dataset over every finished chunk, so a reader sees the run
 * as a single [T, H, W] array. Rank 0 rebuilds it after each chunk and swaps it in with rename(2),
 * so a reader always finds either the old or the new index, whole. */
#include <stdio.h>
#include <stdlib.h>

#include "core/check.h"
#include "io/format.h"
#include "io/io_internal.h"
#include "io/output_names.h"
#include "io/output_guard.h"
#include "io/verify_h5.h"

/* /population, a plain dataset like /generations (DESIGN, Output): small, and a lost chunk
 * file cannot turn it into zeros as it does the virtual /frames. */
static void write_population(hid_t file, const int64_t *population, hsize_t n) {
    hid_t space, dset;
    H5_CHECK(space = H5Screate_simple(1, &n, NULL));
    H5_CHECK(dset = H5Dcreate2(file, "population", H5T_NATIVE_INT64, space, H5P_DEFAULT,
                               H5P_DEFAULT, H5P_DEFAULT));
    H5_CHECK(H5Dwrite(dset, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, population));
    H5_CHECK(H5Dclose(dset));
    H5_CHECK(H5Sclose(space));
}

/* Frames [first, first + n) of the index come from chunk file `chunk`'s /frames. */
static void map_chunk(hid_t dcpl, hid_t vspace, const io_meta *m, const char *chunk, int64_t first,
                      int64_t n) {
    hsize_t start[3] = {(hsize_t)first, 0, 0};
    hsize_t count[3] = {(hsize_t)n, (hsize_t)m->height, (hsize_t)m->row_bytes};
    hid_t sspace;
    H5_CHECK(sspace = H5Screate_simple(3, count, NULL));
    H5_CHECK(H5Sselect_hyperslab(vspace, H5S_SELECT_SET, start, NULL, count, NULL));
    /* the bare file name: HDF5 looks for it next to the index, so the run directory can move;
     * a '%' in it escaped, or HDF5 reads it as a format (output_vds_source_name) */
    char source[2 * GOL_PATH_MAX + 128];
    output_vds_source_name(io_basename(chunk), source, sizeof source);
    H5_CHECK(H5Pset_virtual(dcpl, vspace, source, "/frames", sspace));
    H5_CHECK(H5Sclose(sspace));
}

/* The chunks of the runs this one continues, ahead of its own (io/series.h). */
static void map_prior(hid_t dcpl, hid_t vspace, const io_meta *m, const char *base,
                      const io_series *prior) {
    char chunk[GOL_PATH_MAX + 64];
    for (int64_t c = 0, first = 0; prior && c < prior->nchunks; first += prior->chunk_frames[c++]) {
        const int64_t *g = prior->generations + first;
        output_chunk_name(base, g[0], g[prior->chunk_frames[c] - 1], chunk, sizeof chunk);
        map_chunk(dcpl, vspace, m, chunk, first, prior->chunk_frames[c]);
    }
}

void index_h5_write(const char *base, const io_meta *m, const gol_schedule *sched,
                    int64_t nchunks, const int64_t *population, const io_series *prior) {
    char name[GOL_PATH_MAX + 16], part[GOL_PATH_MAX + 32], chunk[GOL_PATH_MAX + 64];
    output_file_name(base, OUTPUT_INDEX, name, sizeof name);
    output_file_name(base, OUTPUT_INDEX_PART, part, sizeof part);
    int64_t before = prior ? prior->nframes : 0; /* frames of the series before this run */
    int64_t total = before + schedule_chunk_first(sched, nchunks - 1) +
                    schedule_chunk_frames(sched, nchunks - 1);

    hid_t file, vspace, dcpl, dset;
    /* serial sec2 driver: only rank 0 writes the index */
    IO_WRITE_CHECK(part, file = H5Fcreate(part, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
    io_write_root_attrs(file, m);

    hsize_t vdims[3] = {(hsize_t)total, (hsize_t)m->height, (hsize_t)m->row_bytes};
    H5_CHECK(vspace = H5Screate_simple(3, vdims, NULL));
    H5_CHECK(dcpl = H5Pcreate(H5P_DATASET_CREATE));
    map_prior(dcpl, vspace, m, base, prior);
    for (int64_t c = 0; c < nchunks; c++) {
        int64_t first = schedule_chunk_first(sched, c), n = schedule_chunk_frames(sched, c);
        output_chunk_name(base, schedule_frame_generation(sched, first),
                          schedule_frame_generation(sched, first + n - 1), chunk, sizeof chunk);
        map_chunk(dcpl, vspace, m, chunk, before + first, n);
    }
    H5_CHECK(H5Sselect_all(vspace));
    H5_CHECK(dset = H5Dcreate2(file, "frames", H5T_NATIVE_UINT8, vspace, H5P_DEFAULT, dcpl,
                               H5P_DEFAULT));
    if (m->encoding[0] == 'p') io_write_str_attr(dset, "encoding", m->encoding);
    H5_CHECK(H5Dclose(dset));
    H5_CHECK(H5Pclose(dcpl));
    H5_CHECK(H5Sclose(vspace));

    int64_t *gens = gol_xmalloc((size_t)total * sizeof *gens);
    int64_t *pops = gol_xmalloc((size_t)total * sizeof *pops);
    for (int64_t f = 0; f < total; f++) {
        gens[f] = f < before ? prior->generations[f] : schedule_frame_generation(sched, f - before);
        pops[f] = f < before ? prior->population[f] : population[f - before];
    }
    hsize_t ngen = (hsize_t)total;
    hid_t gspace;
    H5_CHECK(gspace = H5Screate_simple(1, &ngen, NULL));
    H5_CHECK(dset = H5Dcreate2(file, "generations", H5T_NATIVE_INT64, gspace, H5P_DEFAULT,
                               H5P_DEFAULT, H5P_DEFAULT));
    IO_WRITE_CHECK(part, H5Dwrite(dset, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, gens));
    H5_CHECK(H5Dclose(dset));
    H5_CHECK(H5Sclose(gspace));
    write_population(file, pops, ngen);
    free(pops);
    IO_WRITE_CHECK(part, H5Fclose(file));
    verify_index(part, m, total, gens); /* the old index stays unless this one reads back */
    free(gens);
    verify_sync(part);
    io_rename(part, name);
}
