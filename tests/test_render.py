#!/usr/bin/env python3
"""golmpi-render: exact pixels at 1:1, exact blended levels at 2:1, ranges, packed frames, errors.

Part 1 builds small golmpi-format files with h5py (the datasets and attributes golmpi writes).
Part 2 (with --golmpi) renders a real golmpi run, the index and a chunk file, u8 and packed-lsb.
The PNGs are decoded here with zlib only, so the test needs no imaging library.
"""
import argparse
import os
import shlex
import struct
import subprocess
import sys
import tempfile
import zlib

import h5py
import numpy as np


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def read_png(path):
    """RGB8 non-interlaced PNG -> uint8 array [H, W, 3]."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail(f"{path}: not a PNG")
    pos, idat, hdr = 8, b"", None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            hdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    w, h, depth, ctype, _, _, interlace = hdr
    if (depth, ctype, interlace) != (8, 2, 0):
        fail(f"{path}: expected 8-bit RGB non-interlaced, got depth {depth} type {ctype}")
    raw = zlib.decompress(idat)
    bpp, stride = 3, w * 3
    out = np.zeros((h, stride), dtype=np.int64)
    prev = np.zeros(stride, dtype=np.int64)
    for y in range(h):
        ftype = raw[y * (stride + 1)]
        line = np.frombuffer(raw, dtype=np.uint8, count=stride, offset=y * (stride + 1) + 1).astype(np.int64)
        cur = np.zeros(stride, dtype=np.int64)
        for x in range(stride):
            a = cur[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if ftype == 0:
                pred = 0
            elif ftype == 1:
                pred = a
            elif ftype == 2:
                pred = b
            elif ftype == 3:
                pred = (a + b) // 2
            elif ftype == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
            else:
                fail(f"{path}: bad filter {ftype}")
            cur[x] = (line[x] + pred) & 0xFF
        out[y] = cur
        prev = cur
    return out.reshape(h, w, 3).astype(np.uint8)


def colour(hexstr):
    return np.array([int(hexstr[i:i + 2], 16) for i in (0, 2, 4)], dtype=np.int64)


def expected_image(grid, bw, bh, dead, alive):
    """Each pixel: a bh x bw block of cells, k of n alive -> (dead*(n-k) + alive*k + n/2) / n."""
    h, w = grid.shape
    blocks = grid.reshape(h // bh, bh, w // bw, bw).astype(np.int64).sum(axis=(1, 3))
    n = bw * bh
    d, a = colour(dead), colour(alive)
    img = (d[None, None, :] * (n - blocks[..., None]) + a[None, None, :] * blocks[..., None] + n // 2) // n
    return img.astype(np.uint8)


def run(cmd, expect_ok=True):
    print("+ " + " ".join(shlex.quote(c) for c in cmd), flush=True)
    p = subprocess.run(cmd, capture_output=True, text=True)
    sys.stdout.write(p.stdout)
    sys.stderr.write(p.stderr)
    if expect_ok and p.returncode != 0:
        fail(f"exit code {p.returncode}: {' '.join(cmd)}")
    if not expect_ok and p.returncode == 0:
        fail(f"expected a non-zero exit: {' '.join(cmd)}")
    return p


def check_image(path, want, what):
    got = read_png(path)
    if got.shape != want.shape:
        fail(f"{what}: image shape {got.shape}, expected {want.shape}")
    if not np.array_equal(got, want):
        bad = np.argwhere((got != want).any(axis=2))
        y, x = bad[0]
        fail(f"{what}: {len(bad)} pixels differ, first at (x={x}, y={y}): got {got[y, x]}, want {want[y, x]}")
    print(f"ok: {what}")


def write_golmpi_file(path, frames, gens, packed=False, fixed_strings=False):
    """fixed_strings: string attributes as fixed-length NULLPAD ASCII, as golmpi writes them;
    otherwise as h5py's variable-length UTF-8."""
    text = np.bytes_ if fixed_strings else str
    f_, h, w = frames.shape
    with h5py.File(path, "w") as f:
        if packed:
            data = np.packbits(frames, axis=2, bitorder="little")
        else:
            data = frames.astype(np.uint8)
        ds = f.create_dataset("frames", data=data, dtype=np.uint8)
        f.create_dataset("generations", data=np.asarray(gens, dtype=np.int64))
        enc = "packed-lsb" if packed else "u8"
        if packed:
            ds.attrs["encoding"] = text(enc)
        for k, v in dict(rule="B3/S23", boundary="torus", encoding=enc, version="0.1.0").items():
            f.attrs[k] = text(v)
        for k, v in dict(width=w, height=h, seed=1, ranks=1).items():
            f.attrs[k] = np.int64(v)
        f.attrs["density"] = 0.5


def synthetic(render, tmp):
    rng = np.random.default_rng(12345)
    h, w = 6, 10
    frames = (rng.random((3, h, w)) < 0.45).astype(np.uint8)
    # every block fraction 0..4/4 appears in frame 1, so each blend level is checked
    frames[1, 0:2, 0:10] = np.array([[0, 0, 1, 0, 1, 1, 1, 1, 1, 1], [0, 0, 0, 0, 0, 1, 0, 1, 1, 1]])
    gens = [0, 5, 10]
    src = os.path.join(tmp, "synth_000000-000010.h5")
    write_golmpi_file(src, frames, gens)

    alive, dead = "ff8000", "102030"
    out = os.path.join(tmp, "one.png")
    run([render, "--frame", "5", "--alive", alive, "--dead", dead, "-o", out, src])
    check_image(out, expected_image(frames[1], 1, 1, dead, alive), "u8 frame 1:1, generation 5")

    out = os.path.join(tmp, "last.png")
    run([render, "--alive", alive, "--dead", dead, "-o", out, src])
    check_image(out, expected_image(frames[2], 1, 1, dead, alive), "default frame is the last")

    out = os.path.join(tmp, "half.png")
    run([render, "--frame", "5", "--width", "5", "--height", "3", "--alive", "ffffff", "--dead", "000000", "-o", out, src])
    want = expected_image(frames[1], 2, 2, "000000", "ffffff")
    levels = sorted(set(want[..., 0].ravel().tolist()))
    for lvl in (0, 64, 128, 191, 255):
        if lvl not in levels:
            fail(f"synthetic frame lacks blend level {lvl} ({levels})")
    check_image(out, want, "2:1 downsampled grey levels")

    out = os.path.join(tmp, "half_colour.png")
    run([render, "--frame", "5", "--width", "5", "--alive", alive, "--dead", dead, "-o", out, src])
    check_image(out, expected_image(frames[1], 2, 2, dead, alive), "2:1 colour blend, height from aspect")

    prefix = os.path.join(tmp, "seq")
    run([render, "--range", "5:10", "--alive", alive, "--dead", dead, "-o", prefix, src])
    for i, g in ((1, 5), (2, 10)):
        check_image(f"{prefix}_{g:06d}.png", expected_image(frames[i], 1, 1, dead, alive), f"--range frame {g}")
    if os.path.exists(f"{prefix}_000000.png"):
        fail("--range 5:10 wrote generation 0")

    # packed-lsb, width not a multiple of 8
    hp, wp = 4, 13
    pframes = (rng.random((2, hp, wp)) < 0.5).astype(np.uint8)
    psrc = os.path.join(tmp, "packed_000000-000001.h5")
    write_golmpi_file(psrc, pframes, [0, 1], packed=True, fixed_strings=True)
    out = os.path.join(tmp, "packed.png")
    run([render, "--frame", "0", "--alive", alive, "--dead", dead, "-o", out, psrc])
    check_image(out, expected_image(pframes[0], 1, 1, dead, alive), "packed-lsb 1:1 (width 13)")

    # a big-ish frame, default size: min(grid, 1024) keeping the aspect ratio
    big = np.zeros((1, 512, 2048), dtype=np.uint8)
    big[0, :, 1::2] = 1
    bsrc = os.path.join(tmp, "big_000000.h5")
    write_golmpi_file(bsrc, big, [0], fixed_strings=True)
    out = os.path.join(tmp, "big.png")
    run([render, "-o", out, bsrc])
    check_image(out, expected_image(big[0], 2, 2, "000000", "ffffff"), "default size 2048x512 -> 1024x256")

    # errors: clear message, non-zero exit
    for args, text in (
        (["--frame", "7", src], "no frame of generation 7"),
        ([os.path.join(tmp, "missing.h5")], "missing.h5"),
        (["--width", "abc", src], "--width"),
        (["--alive", "12345", src], "--alive"),
        (["--bogus", src], "unknown option"),
        ([out], "not an HDF5 file"),
    ):
        p = run([render, "-o", os.path.join(tmp, "err.png")] + args, expect_ok=False)
        if text not in p.stderr:
            fail(f"error message for {args} lacks '{text}': {p.stderr!r}")
    if os.path.exists(os.path.join(tmp, "err.png")):
        fail("a failed render left an output PNG")
    print("ok: error cases")


def real_run(render, golmpi, launcher, tmp):
    size, steps = 64, 6
    outputs = {}
    for fmt in ("u8", "packed"):
        d = os.path.join(tmp, "run_" + fmt)
        os.makedirs(d)
        base = os.path.join(d, "life.h5")
        cmd = launcher + [golmpi, "--backend", "cpu", "--size", str(size), "--steps", str(steps),
                          "--save-every", "2", "--chunk", "2", "--seed", "7", "--quiet",
                          "--frame-format", fmt, "--output", base]
        run(cmd)
        outputs[fmt] = d
    with h5py.File(os.path.join(outputs["u8"], "life.h5"), "r") as f:
        frames = f["frames"][...]
        gens = f["generations"][...].tolist()
    if frames.shape != (len(gens), size, size) or not frames.any():
        fail(f"real run: unexpected index frames {frames.shape}, generations {gens}")
    alive, dead = "00ff00", "000080"
    for fmt, d in outputs.items():
        index = os.path.join(d, "life.h5")
        prefix = os.path.join(d, "r")
        run([render, "--range", f"0:{steps}", "--alive", alive, "--dead", dead, "-o", prefix, index])
        for i, g in enumerate(gens):
            check_image(f"{prefix}_{g:06d}.png", expected_image(frames[i], 1, 1, dead, alive),
                        f"real run ({fmt}) index, generation {g}, 1:1")
        chunks = sorted(n for n in os.listdir(d) if n.startswith("life_") and n.endswith(".h5"))
        if not chunks:
            fail(f"real run ({fmt}): no chunk files in {d}")
        chunk = os.path.join(d, chunks[-1])
        with h5py.File(chunk, "r") as f:
            cg = f["generations"][...].tolist()
        out = os.path.join(d, "half.png")
        run([render, "--frame", str(cg[0]), "--width", str(size // 2), "-o", out, chunk])
        check_image(out, expected_image(frames[gens.index(cg[0])], 2, 2, "000000", "ffffff"),
                    f"real run ({fmt}) chunk {chunks[-1]}, generation {cg[0]}, 2:1")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--render", required=True)
    ap.add_argument("--golmpi", help="also render a real run of this golmpi")
    ap.add_argument("--launcher", default="", help="MPI launcher command line, e.g. 'mpiexec -n 2'")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="golmpi_render_") as tmp:
        synthetic(args.render, tmp)
        if args.golmpi:
            real_run(args.render, args.golmpi, shlex.split(args.launcher), tmp)
    print("PASS")


if __name__ == "__main__":
    main()
