#!/usr/bin/env python3
"""golmpi-render: exact pixels at 1:1, exact blended levels at 2:1, ranges, packed frames, crops,
zooms, animated PNGs decoded frame by frame, RLE read back by golmpi, errors (exit 2, one line);
and bench/plot_population.py's series against the frames.

Part 1 builds small golmpi-format files with h5py (the datasets and attributes golmpi writes).
Part 2 (with --golmpi) renders a real golmpi run, the index and a chunk file, u8 and packed-lsb,
writes frames and crops as RLE and starts golmpi from them (--steps 0), and plots a population.
The PNGs are decoded here with zlib only, so the test needs no imaging library.
"""
import argparse
import os
import re
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


def png_chunks(path):
    """Every chunk of a PNG file as (type, body), each CRC checked."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail(f"{path}: not a PNG")
    pos, chunks = 8, []
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])
        if zlib.crc32(kind + body) != crc:
            fail(f"{path}: bad CRC in chunk {kind!r} at byte {pos}")
        chunks.append((kind, body))
        pos += 12 + length
        if kind == b"IEND":
            break
    if not chunks or chunks[-1][0] != b"IEND" or pos != len(data):
        fail(f"{path}: no IEND at the end")
    return chunks


def unfilter(path, raw, w, h):
    """The inflated image data of an RGB8 image -> uint8 array [H, W, 3]."""
    bpp, stride = 3, w * 3
    if len(raw) != h * (stride + 1):
        fail(f"{path}: {len(raw)} bytes of image data, expected {h * (stride + 1)}")
    out = np.zeros((h, stride), dtype=np.int64)
    prev = np.zeros(stride, dtype=np.int64)
    for y in range(h):
        ftype = raw[y * (stride + 1)]
        line = np.frombuffer(raw, dtype=np.uint8, count=stride, offset=y * (stride + 1) + 1).astype(np.int64)
        if ftype == 0:
            cur = line
        elif ftype == 1:  # Sub: a running sum per channel
            cur = np.cumsum(line.reshape(w, bpp), axis=0).ravel() & 0xFF
        elif ftype == 2:  # Up
            cur = (line + prev) & 0xFF
        else:
            cur = np.zeros(stride, dtype=np.int64)
            for x in range(stride):
                a = cur[x - bpp] if x >= bpp else 0
                b = prev[x]
                c = prev[x - bpp] if x >= bpp else 0
                if ftype == 3:
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


def read_header(path, chunks):
    kind, body = chunks[0]
    if kind != b"IHDR":
        fail(f"{path}: the first chunk is {kind!r}, not IHDR")
    w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
    if (depth, ctype, interlace) != (8, 2, 0):
        fail(f"{path}: expected 8-bit RGB non-interlaced, got depth {depth} type {ctype}")
    return w, h


def read_png(path):
    """RGB8 non-interlaced PNG -> uint8 array [H, W, 3]."""
    chunks = png_chunks(path)
    w, h = read_header(path, chunks)
    idat = b"".join(body for kind, body in chunks if kind == b"IDAT")
    return unfilter(path, zlib.decompress(idat), w, h)


def read_apng(path):
    """Animated PNG -> (plays, [(delay in seconds, uint8 [H, W, 3])]), checked against the APNG
    spec: acTL before the image data, sequence numbers 0, 1, 2, ... over fcTL and fdAT, every
    frame full size at 0,0, the first frame's data in IDAT (the still image)."""
    chunks = png_chunks(path)
    w, h = read_header(path, chunks)
    kinds = [k for k, _ in chunks]
    if b"acTL" not in kinds or kinds.index(b"acTL") > kinds.index(b"IDAT"):
        fail(f"{path}: no acTL before IDAT: not an animated PNG")
    nframes, plays = struct.unpack(">II", chunks[kinds.index(b"acTL")][1])
    frames, seq, cur = [], 0, None
    for kind, body in chunks:
        if kind in (b"fcTL", b"fdAT"):
            (n,) = struct.unpack(">I", body[:4])
            if n != seq:
                fail(f"{path}: sequence number {n}, expected {seq}")
            seq += 1
        if kind == b"fcTL":
            _, fw, fh, fx, fy, dnum, dden, dispose, blend = struct.unpack(">IIIIIHHBB", body)
            if (fw, fh, fx, fy) != (w, h, 0, 0):
                fail(f"{path}: frame {len(frames)} is {fw}x{fh} at {fx},{fy}, not the whole {w}x{h}")
            cur = [dnum / (dden or 100), b""]
            frames.append(cur)
        elif kind == b"IDAT":
            if len(frames) != 1:
                fail(f"{path}: IDAT outside the first frame")
            cur[1] += body
        elif kind == b"fdAT":
            if len(frames) < 2:
                fail(f"{path}: fdAT in the first frame")
            cur[1] += body[4:]
    if len(frames) != nframes:
        fail(f"{path}: acTL says {nframes} frames, the file holds {len(frames)}")
    return plays, [(d, unfilter(path, zlib.decompress(data), w, h)) for d, data in frames]


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
    """expect_ok False: bad input, which must exit 2 with one line on stderr."""
    print("+ " + " ".join(shlex.quote(c) for c in cmd), flush=True)
    p = subprocess.run(cmd, capture_output=True, text=True)
    sys.stdout.write(p.stdout)
    sys.stderr.write(p.stderr)
    if expect_ok and p.returncode != 0:
        fail(f"exit code {p.returncode}: {' '.join(cmd)}")
    if not expect_ok:
        if p.returncode != 2:
            fail(f"expected exit code 2 (bad input), got {p.returncode}: {' '.join(cmd)}")
        if len(p.stderr.splitlines()) != 1 or not p.stderr.startswith("golmpi-render: error: "):
            fail(f"expected one 'golmpi-render: error:' line on stderr, got {p.stderr!r}")
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

    # getopt_long's forms: -oFILE, --output=FILE, options after the file
    for form in (["-o" + out + "2"], ["--output=" + out + "2"], [bsrc, "-o", out + "2"]):
        if os.path.exists(out + "2"):
            os.unlink(out + "2")
        run([render] + form + ([bsrc] if form[0] != bsrc else []))
        check_image(out + "2", expected_image(big[0], 2, 2, "000000", "ffffff"), f"form {form}")
    print("ok: -oFILE, --output=FILE and options after the file")

    # errors: clear message, non-zero exit
    for args, text in (
        (["--rle=1", src], "--rle takes no value"),
        (["--frame"], "--frame needs a value"),
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


def zoomed(img, n):
    return np.repeat(np.repeat(img, n, axis=0), n, axis=1)


def check_pixels(got, want, what):
    if got.shape != want.shape:
        fail(f"{what}: image shape {got.shape}, expected {want.shape}")
    if not np.array_equal(got, want):
        bad = np.argwhere((got != want).any(axis=2))
        y, x = bad[0]
        fail(f"{what}: {len(bad)} pixels differ, first at (x={x}, y={y}): got {got[y, x]}, want {want[y, x]}")
    print(f"ok: {what}")


def check_animation(path, wants, delay_s, plays, what):
    got_plays, frames = read_apng(path)
    if got_plays != plays:
        fail(f"{what}: acTL plays {got_plays}, expected {plays}")
    if len(frames) != len(wants):
        fail(f"{what}: {len(frames)} frames, expected {len(wants)}")
    for i, ((delay, img), want) in enumerate(zip(frames, wants)):
        if abs(delay - delay_s) > 1e-9:
            fail(f"{what}: frame {i} delay {delay} s, expected {delay_s} s")
        check_pixels(img, want, f"{what}, frame {i}")


def crop_zoom_animate(render, tmp):
    """--crop, --zoom and --animate on small files whose every pixel is known."""
    rng = np.random.default_rng(777)
    h, w = 9, 14
    frames = (rng.random((4, h, w)) < 0.4).astype(np.uint8)
    gens = [0, 3, 6, 9]
    alive, dead = "20e040", "301008"
    for packed in (False, True):
        tag = "packed" if packed else "u8"
        src = os.path.join(tmp, f"anim_{tag}_000000-000009.h5")
        write_golmpi_file(src, frames, gens, packed=packed, fixed_strings=packed)
        cx, cy, cw, ch = 3, 2, 7, 5
        crop = frames[:, cy:cy + ch, cx:cx + cw]
        colours = ["--alive", alive, "--dead", dead]

        out = os.path.join(tmp, f"crop_{tag}.png")
        run([render, "--frame", "3", "--crop", f"{cx},{cy},{cw},{ch}", "-o", out] + colours + [src])
        check_image(out, expected_image(crop[1], 1, 1, dead, alive), f"{tag}: --crop 1:1")

        out = os.path.join(tmp, f"zoom_{tag}.png")
        run([render, "--frame", "6", "--crop", f"{cx},{cy},{cw},{ch}", "--zoom", "5", "-o", out] + colours + [src])
        check_image(out, zoomed(expected_image(crop[2], 1, 1, dead, alive), 5), f"{tag}: --crop --zoom 5")

        out = os.path.join(tmp, f"zoomall_{tag}.png")
        run([render, "--zoom", "3", "-o", out] + colours + [src])
        check_image(out, zoomed(expected_image(frames[3], 1, 1, dead, alive), 3), f"{tag}: --zoom 3, whole grid")

        # a crop downsampled: --width on the crop, 2x2 blocks of it
        out = os.path.join(tmp, f"cropdown_{tag}.png")
        run([render, "--frame", "0", "--crop", "2,1,12,8", "--width", "6", "-o", out, src])
        check_image(out, expected_image(frames[0, 1:9, 2:14], 2, 2, "000000", "ffffff"), f"{tag}: --crop then 2:1")

        out = os.path.join(tmp, f"anim_{tag}.png")
        run([render, "--animate", "--range", "3:9", "--crop", f"{cx},{cy},{cw},{ch}", "--zoom", "2",
             "--delay", "40", "--loop", "3", "-o", out] + colours + [src])
        check_animation(out, [zoomed(expected_image(crop[i], 1, 1, dead, alive), 2) for i in (1, 2, 3)],
                        0.040, 3, f"{tag}: --animate --range 3:9 --crop --zoom 2")

        out = os.path.join(tmp, f"animall_{tag}.png")
        run([render, "--animate", "-o", out, src])
        check_animation(out, [expected_image(frames[i], 1, 1, "000000", "ffffff") for i in range(4)],
                        0.100, 0, f"{tag}: --animate, every frame, defaults")
        # a viewer without APNG support shows the first frame: IDAT holds it
        check_image(out, expected_image(frames[0], 1, 1, "000000", "ffffff"), f"{tag}: APNG still image")

    # an APNG larger than one 64 KiB deflate buffer: the image data spans several fdAT chunks
    big = (rng.random((3, 360, 1024)) < 0.5).astype(np.uint8)
    bsrc = os.path.join(tmp, "bigAnim_000000-000002.h5")
    write_golmpi_file(bsrc, big, [0, 1, 2])
    out = os.path.join(tmp, "big_anim.png")
    run([render, "--animate", "--zoom", "1", "--alive", alive, "--dead", dead, "-o", out, bsrc])
    if sum(1 for k, _ in png_chunks(out) if k == b"fdAT") <= 2:
        fail("big animation: expected frames of several fdAT chunks")
    check_animation(out, [expected_image(big[i], 1, 1, dead, alive) for i in range(3)],
                    0.100, 0, "APNG of several data chunks a frame")


def version_and_errors(render, tmp):
    p = run([render, "--version"])
    if not p.stdout.startswith("golmpi-render ") or "libpng" not in p.stdout:
        fail(f"--version: {p.stdout!r}")
    p = run([render, "--help"])
    for opt in ("--crop X,Y,W,H", "--zoom N", "--animate", "--delay MS", "--loop N", "--rle", "--version"):
        if opt not in p.stdout:
            fail(f"--help lacks {opt}")
    p = subprocess.run([render], capture_output=True, text=True)
    if p.returncode != 2 or "usage: golmpi-render" not in p.stderr:
        fail(f"no arguments: expected usage on stderr and exit 2, got {p.returncode} {p.stderr!r}")
    src = os.path.join(tmp, "err_000000-000001.h5")
    write_golmpi_file(src, np.zeros((2, 8, 10), np.uint8), [0, 1])
    for args, text in (
        (["--crop", "1,2,3", src], "--crop: '1,2,3' is not X,Y,W,H"),
        (["--crop", "1,2,0,4", src], "is not X,Y,W,H"),
        (["--crop", "-1,2,3,4", src], "is not X,Y,W,H"),
        (["--crop", "5,2,6,4", src], "--crop 5,2,6,4 does not fit the 10x8 grid"),
        (["--crop", "0,8,1,1", src], "does not fit"),
        (["--zoom", "0", src], "--zoom: '0' is not an integer in 1.."),
        (["--zoom", "2", "--width", "5", src], "--zoom sets the image size"),
        (["--delay", "50", src], "--delay applies to --animate only"),
        (["--animate", "--delay", "70000", src], "--delay: '70000' is not an integer in 0..65535"),
        (["--animate", "--frame", "1", src], "--animate plays the frames of --range"),
        (["--animate", "--range", "5:9", src], "no frame with a generation in 5:9"),
        (["--rle", "--zoom", "2", src], "--rle writes cells, not pixels: --zoom does not apply"),
        (["--rle", "--range", "0:1", src], "--rle writes one frame"),
        (["--rle", "--animate", src], "--animate and --rle cannot be used together"),
        (["--rle=yes", src], "--rle takes no value"),
        (["--frame", "1"], "no input file given"),
    ):
        p = run([render, "-o", os.path.join(tmp, "err.out")] + args, expect_ok=False)
        if text not in p.stderr:
            fail(f"error message for {args} lacks '{text}': {p.stderr!r}")
    if os.path.exists(os.path.join(tmp, "err.out")):
        fail("a failed render left an output file")
    print("ok: --version, --help and the errors of the new options")


def parse_rle(path):
    """A reference reader for the test: (header line, grid) of an RLE file."""
    with open(path) as f:
        lines = f.read().splitlines()
    for ln in lines:
        if len(ln) > 70:
            fail(f"{path}: line of {len(ln)} characters (at most 70): {ln!r}")
    body = [ln for ln in lines if not ln.startswith("#")]
    header, text = body[0], "".join(body[1:])
    m = re.fullmatch(r"x = (\d+), y = (\d+), rule = (\S+)", header)
    if not m:
        fail(f"{path}: header {header!r}")
    w, h = int(m.group(1)), int(m.group(2))
    grid = np.zeros((h, w), np.uint8)
    x = y = 0
    for num, tag in re.findall(r"(\d*)([bo$!])", text):
        k = int(num or 1)
        if tag == "o":
            grid[y, x:x + k] = 1
        if tag in "ob":
            x += k
        elif tag == "$":
            y, x = y + k, 0
        else:
            break
    if not text.endswith("!"):
        fail(f"{path}: does not end with '!'")
    return header, grid


def rle_roundtrip(render, golmpi, launcher, tmp):
    """--rle of a frame and of a crop, read back by golmpi's own pattern reader (--steps 0): the
    frame golmpi starts from must be the cells the RLE was cut from, with the run's rule and the
    boundary of its bounded-grid suffix."""
    size = 48
    for boundary, fmt, rule in (("torus", "u8", "B36/S23"), ("dead", "packed", "B3/S23")):
        d = os.path.join(tmp, f"rle_{boundary}")
        os.makedirs(d)
        base = os.path.join(d, "life.h5")
        run(launcher + [golmpi, "--backend", "cpu", "--size", str(size), "--steps", "8", "--save-every", "4",
                        "--chunk", "2", "--seed", "11", "--density", "0.3", "--rule", rule,
                        "--boundary", boundary, "--frame-format", fmt, "--quiet", "--output", base])
        with h5py.File(base, "r") as f:
            frames = f["frames"][...]
            gens = f["generations"][...].tolist()
        if fmt == "packed":
            frames = np.unpackbits(frames, axis=2, bitorder="little")[:, :, :size]
        letter = "T" if boundary == "torus" else "P"
        for crop, gen in ((None, gens[-1]), ((5, 7, 31, 17), 4)):
            x, y, w, h = crop or (0, 0, size, size)
            want = frames[gens.index(gen), y:y + h, x:x + w]
            rle = os.path.join(d, f"g{gen}_{w}x{h}.rle")
            cmd = [render, "--rle", "--frame", str(gen), "-o", rle]
            run(cmd + (["--crop", ",".join(map(str, crop))] if crop else []) + [base])
            header, grid = parse_rle(rle)
            expect = f"x = {w}, y = {h}, rule = {rule}:{letter}{w},{h}"
            if header != expect:
                fail(f"{rle}: header {header!r}, expected {expect!r}")
            if not np.array_equal(grid, want):
                fail(f"{rle}: the RLE's cells differ from the frame's")
            back = os.path.join(d, f"back_{gen}_{w}x{h}.h5")
            run(launcher + [golmpi, "--backend", "cpu", "--pattern", rle, "--steps", "0", "--quiet",
                            "--output", back])
            with h5py.File(back, "r") as f:
                got = f["frames"][0]
                attrs = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in f.attrs.items()}
            if attrs["boundary"] != boundary or attrs["rule"] != rule or got.shape != want.shape:
                fail(f"{rle}: golmpi read it as {attrs['rule']} {attrs['boundary']} {got.shape}, "
                     f"expected {rule} {boundary} {want.shape}")
            if not np.array_equal(got, want):
                fail(f"{rle}: golmpi's start frame differs from the frame in {int((got != want).sum())} cells")
            print(f"ok: --rle {boundary} {fmt} generation {gen} crop {crop}: golmpi reads back the same "
                  f"{w}x{h} cells ({int(want.sum())} alive)")


def population_plot(golmpi, launcher, tmp):
    """bench/plot_population.py on a real run, u8 and packed: the series it reports (from
    /population, or counted from the frames where a file has none) is the live cells of every
    frame, and the PNG is drawn where matplotlib is installed."""
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench", "plot_population.py")
    try:
        import matplotlib  # noqa: F401
        plot = []
    except ImportError:
        plot = ["--no-plot"]
        print("note: no matplotlib in this Python: plot_population.py checked with --no-plot")
    for fmt in ("u8", "packed"):
        d = os.path.join(tmp, f"pop_{fmt}")
        os.makedirs(d)
        base = os.path.join(d, "life.h5")
        run(launcher + [golmpi, "--backend", "cpu", "--width", "45", "--height", "30", "--steps", "12",
                        "--save-every", "3", "--chunk", "2", "--seed", "5", "--frame-format", fmt,
                        "--quiet", "--output", base])
        with h5py.File(base, "r") as f:
            frames = f["frames"][...]
            gens = f["generations"][...].tolist()
            stored = f["population"][...].tolist() if "population" in f else None
        if fmt == "packed":
            frames = np.unpackbits(frames, axis=2, bitorder="little")[:, :, :45]
        want = [int(fr.sum()) for fr in frames]
        if stored is not None and stored != want:
            fail(f"{base}: /population {stored} differs from the frames' live cells {want}")
        csv_path, png = os.path.join(d, "pop.csv"), os.path.join(d, "pop.png")
        p = run([sys.executable, script, base, "--csv", csv_path, "-o", png] + plot)
        source = "/population" if stored is not None else "counted from /frames"
        if f"({source})" not in p.stdout:
            fail(f"plot_population.py: expected the series {source}: {p.stdout!r}")
        with open(csv_path) as f:
            rows = [tuple(map(int, ln.split(","))) for ln in f.read().splitlines()[1:]]
        if rows != list(zip(gens, want)):
            fail(f"plot_population.py {fmt}: series {rows}, expected {list(zip(gens, want))}")
        if not plot:
            if read_png_size(png)[0] < 100:
                fail(f"plot_population.py: {png} is not a plot")
        print(f"ok: plot_population.py ({fmt}, {source}): {len(rows)} frames, population {want[0]} .. {want[-1]}")


def read_png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        fail(f"{path}: not a PNG")
    return struct.unpack(">II", head[16:24])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--render", required=True)
    ap.add_argument("--golmpi", help="also render a real run of this golmpi")
    ap.add_argument("--launcher", default="", help="MPI launcher command line, e.g. 'mpiexec -n 2'")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="golmpi_render_") as tmp:
        synthetic(args.render, tmp)
        crop_zoom_animate(args.render, tmp)
        version_and_errors(args.render, tmp)
        if args.golmpi:
            real_run(args.render, args.golmpi, shlex.split(args.launcher), tmp)
            rle_roundtrip(args.render, args.golmpi, shlex.split(args.launcher), tmp)
            population_plot(args.golmpi, shlex.split(args.launcher), tmp)
    print("PASS")


if __name__ == "__main__":
    main()
