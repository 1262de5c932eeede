/* golfile: the one reader of golmpi's output format (a chunk file or the index <base>.h5): its
 * root attributes, the shape of /frames and /generations, the generations, and rows of any frame,
 * for restart and for golmpi-render.
 *
 * Serial and MPI-free: a file is opened by one process with HDF5's default driver, so a tool may
 * use it without MPI_Init. The file is user input, so nothing here aborts on a bad file and HDF5
 * never prints its error stack: every call turns HDF5's error printing off while it runs.
 * Two policies sit on top of the same facts: golfile_read_meta judges a file as restart must
 * (every attribute present, shapes agreeing, one message per fault), while golfile_facts lets a
 * more forgiving reader (golmpi-render) apply rules of its own. */
#ifndef GOLMPI_IO_GOLFILE_H
#define GOLMPI_IO_GOLFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/config.h"
#include "core/life_word.h"
#include "core/status.h"

typedef struct golfile golfile;

/* What the file holds, as found, judged by no one yet. */
typedef struct golfile_facts {
    bool frames_found;      /* a link named /frames */
    bool frames_open;       /* ... that opens as a dataset */
    bool frames_bytes;      /* its elements are 1-byte integers */
    int frames_ndims;       /* -1 when not open */
    int64_t frames_dims[3]; /* [frames, rows, bytes per row] when frames_ndims == 3 */
    bool generations_found;
    int generations_ndims;     /* -1 when it does not open */
    int64_t generations_count; /* elements; -1 when it does not open */
} golfile_facts;

/* The run a golmpi file describes, checked: the root attributes and the frames that agree with
 * them (docs/FORMAT.md, "Files"). */
typedef struct golfile_meta {
    int64_t width, height;
    gol_rule rule;
    char rule_text[32]; /* canonical */
    gol_boundary boundary;
    uint64_t seed;
    double density;
    char encoding[32]; /* IO_ENCODING_U8 or IO_ENCODING_PACKED */
    bool packed;
    int64_t row_bytes;       /* bytes of one stored row: width, or ceil(width/8) packed */
    int32_t ranks;           /* 0 when absent: the attribute is informative only */
    char version[32];        /* "" when absent */
    int64_t nframes;         /* >= 1 */
    int64_t last_generation; /* of frame nframes-1 */
} golfile_meta;

/* Where a frame's bytes really are: the file itself, or for the index the chunk file its virtual
 * dataset maps the frame from, and the frame's index in that file's /frames. */
typedef struct golfile_source {
    char file[GOL_PATH_MAX + 64];
    int64_t frame;
} golfile_source;

/* H5Fis_hdf5: false for a file that is not HDF5 or cannot be read. */
bool golfile_is_hdf5(const char *path);

/* Read-only. NULL when HDF5 cannot open the file; no message. */
golfile *golfile_open(const char *path);
void golfile_close(golfile *g);
const golfile_facts *golfile_facts_of(const golfile *g);

/* A string or integer attribute of the root (on == NULL) or of /frames (on == "frames"): false
 * when absent or of another kind. Strings may be fixed or variable length, ASCII or UTF-8: golmpi
 * writes fixed ASCII, h5py variable UTF-8. An integer must be a single value. */
bool golfile_attr_str(const golfile *g, const char *on, const char *name, char *out, size_t len);
bool golfile_attr_i64(const golfile *g, const char *on, const char *name, int64_t *out);

/* The root attributes and the shapes, judged: a user error (GOL_EXIT_USAGE) naming the file and
 * the fault when anything is missing, unknown or inconsistent, or the file holds no frame. */
gol_status golfile_read_meta(const golfile *g, golfile_meta *m);

/* Generations [first, first+n) into out: false when /generations cannot be read there. */
bool golfile_read_generations(const golfile *g, int64_t first, int64_t n, int64_t *out);

/* Rows [r0, r0+n) of frame t, as stored (row_bytes = frames_dims[2] bytes a row, u8 or packed),
 * into buf: false when the rows lie outside /frames or cannot be read. For the index this reads
 * through the virtual dataset, where HDF5 gives zeros for a missing chunk file. */
bool golfile_read_rows(const golfile *g, int64_t t, int64_t r0, int64_t n, uint8_t *buf);

/* Where the last of nframes frames really lives (see golfile_source). For the index, a user error
 * when no mapping holds that frame or its chunk file cannot be read: restart reads the chunk file
 * itself, because through the virtual dataset a missing chunk would read as zeros, silently. */
gol_status golfile_locate_last_frame(const golfile *g, int64_t nframes, golfile_source *src);

#endif
