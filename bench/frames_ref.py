#!/usr/bin/env python3
"""The serial-HDF5 reference of bench/bench_frames.sh: h5py writes FRAMES frames of SIZE x SIZE
u8 cells (0 or 1, the bytes golmpi writes) into chunk files of CHUNK frames each, as golmpi lays
them out (/frames [n, H, W], contiguous, no fill, /generations), each file closed and fsync'ed
before the next. The frames are made before the clock starts; the time runs from the first
create to the last fsync. Prints "<bytes> <seconds>".

    frames_ref.py DIR SIZE FRAMES CHUNK
"""
import os
import sys
import time

import h5py
import numpy as np


def main():
    out, size, frames, chunk = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    rng = np.random.default_rng(1)
    data = rng.integers(0, 2, size=(min(chunk, frames), size, size), dtype=np.uint8)
    written = 0
    t0 = time.perf_counter()
    for first in range(0, frames, chunk):
        n = min(chunk, frames - first)
        name = os.path.join(out, f"ref_{first:06d}.h5")
        with h5py.File(name, "w", libver="latest") as f:
            d = f.create_dataset("frames", shape=(n, size, size), dtype=np.uint8,
                                 fillvalue=None, track_times=False)
            d.write_direct(data, np.s_[0:n])
            f["generations"] = np.arange(first, first + n, dtype=np.int64)
            written += data[:n].nbytes + 8 * n
        fd = os.open(name, os.O_RDONLY)
        os.fsync(fd)
        os.close(fd)
    print(written, f"{time.perf_counter() - t0:.6f}")


if __name__ == "__main__":
    main()
