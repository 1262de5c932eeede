#!/usr/bin/env python3
"""ParaView at any size: tools/golmpi-view, run as a user would from the run's own
directory with the bare name `life.xmf`, under `xvfb-run -a pvpython`, writes a screenshot that
shows the Life grid as an image in two colours, live cells white where the frame has them and
dead ones black, not an outline: at 512^2 (the last frame of a random run) and at 16384^2 (frame
0 of a run from a pattern of solid blocks, so that each pixel, 16 x 16 cells, is all alive or
all dead). The screenshot is compared with the frame (h5py): every pixel whose cells are all alive
or all dead must have their colour, and those pixels must be most of the grid. 77 (skip) without
pvpython or xvfb-run. About 40 s and 3 GB at 16384^2.

    test_golmpi_view.py --golmpi build/golmpi --view tools/golmpi-view --mpiexec mpiexec ...
"""
import argparse, os, shutil, subprocess, sys, tempfile

import h5py
import numpy as np

RES = 1024


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def blocks_rle(n, path):
    """Four solid squares of n/4 cells at known places, as an RLE for --pattern."""
    b = n // 4
    rows = []
    for y in range(n):
        if y < b or (2 * b <= y < 3 * b):
            rows.append(f"{b}o{b}b{b}o" if y < b else f"{b}b{b}o")
        else:
            rows.append("")
    with open(path, "w") as f:
        f.write(f"x = {n}, y = {n}, rule = B3/S23\n" + "$".join(rows) + "!\n")


def read_png(path):
    """RGB, 0..255: with matplotlib where there is one (fast), else decoded here."""
    try:
        import matplotlib.image
        img = matplotlib.image.imread(path)
        return (img[:, :, :3] * 255).round().astype(np.int32)
    except ImportError:
        pass
    import zlib, struct
    data = open(path, "rb").read()
    pos, chunks = 8, []
    w = h = ctype = None
    while pos < len(data):
        ln, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + ln]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            if depth != 8:
                fail(f"{path}: bit depth {depth}")
        elif kind == b"IDAT":
            chunks.append(body)
        pos += 12 + ln
    ch = {2: 3, 6: 4}[ctype]
    raw = np.frombuffer(zlib.decompress(b"".join(chunks)), dtype=np.uint8)
    stride = w * ch + 1
    img = np.zeros((h, w * ch), dtype=np.int32)
    prev = np.zeros(w * ch, dtype=np.int32)
    for y in range(h):
        ftype, line = raw[y * stride], raw[y * stride + 1:(y + 1) * stride].astype(np.int32)
        out = np.zeros_like(line)
        for x in range(len(line)):  # PNG filters (small images only)
            a = out[x - ch] if x >= ch else 0
            b, c = prev[x], prev[x - ch] if x >= ch else 0
            p = [line[x], line[x] + a, line[x] + b, line[x] + (a + b) // 2,
                 line[x] + (a if abs(b - c) <= abs(a - c) and abs(b - c) <= abs(a + b - 2 * c)
                            else b if abs(a - c) <= abs(a + b - 2 * c) else c)][ftype]
            if ftype == 4:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                p = line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)
            out[x] = p & 255
        img[y], prev = out, out
    return img.reshape(h, w, ch)[:, :, :3]


def check(png, frame, label):
    img = read_png(png)
    grey = (np.abs(img - 77) <= 2).all(axis=2)
    ys, xs = np.nonzero(~grey)
    if len(ys) == 0:
        fail(f"{label}: the screenshot is all background")
    y0, y1, x0, x1 = ys.min(), ys.max() + 1, xs.min(), xs.max() + 1
    box = img[y0:y1, x0:x1]
    ph, pw = box.shape[:2]
    white = (box >= 230).all(axis=2)
    black = (box <= 25).all(axis=2)
    two = (white | black).mean()
    print(f"{label}: {pw} x {ph} px, {two:.1%} black or white")
    if two < 0.95 or pw < RES // 2:
        fail(f"{label}: the grid is drawn in {pw} x {ph} px, {two:.1%} of it black or white: "
             "not an image of the cells (an outline?)")
    h, w = frame.shape
    if pw >= w:  # a pixel or more per cell: the pixel at each cell's centre has its colour
        py = ((np.arange(h) + 0.5) * ph / h).astype(int)
        px = ((np.arange(w) + 0.5) * pw / w).astype(int)
        shown = white[py][:, px]
        wrong, decided = int((shown != frame.astype(bool)).sum()), h * w
        alive = int(frame.sum())
    else:  # many cells a pixel: pixels whose cells, and one more all round, are all alive or dead
        s = np.zeros((h + 1, w + 1), dtype=np.int64)
        s[1:, 1:] = frame.astype(np.int64).cumsum(0).cumsum(1)
        ry = (np.arange(ph + 1) * h) // ph
        rx = (np.arange(pw + 1) * w) // pw
        a, b = np.maximum(ry[:-1] - 1, 0), np.minimum(ry[1:] + 1, h)
        c, d = np.maximum(rx[:-1] - 1, 0), np.minimum(rx[1:] + 1, w)
        live = s[b][:, d] - s[a][:, d] - s[b][:, c] + s[a][:, c]
        area = (b - a)[:, None] * (d - c)[None, :]
        all_live, all_dead = live == area, live == 0
        decided = int(all_live.sum() + all_dead.sum())
        wrong = int((all_live & ~white).sum() + (all_dead & ~black).sum())
        alive = int(all_live.sum())
        if decided < 0.5 * ph * pw:
            fail(f"{label}: only {decided} of {ph * pw} pixels decided: the test's frame is wrong")
    if wrong > 0.001 * decided:
        fail(f"{label}: {wrong} of {decided} cells or pixels have the wrong colour")
    print(f"ok: {label}: the grid as a {pw} x {ph} px image; {decided - wrong} of {decided} "
          f"cells or pixels right ({alive} alive)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--golmpi", required=True)
    ap.add_argument("--view", required=True)
    ap.add_argument("--big", type=int, default=16384)
    ap.add_argument("--mpiexec", nargs=argparse.REMAINDER, required=True)
    a = ap.parse_args()
    if not shutil.which("pvpython") or not shutil.which("xvfb-run"):
        print("skip: no pvpython or xvfb-run")
        sys.exit(77)
    view = os.path.abspath(a.view)
    work = tempfile.mkdtemp(prefix="golmpi_view_")
    try:
        for n, extra, t in ((512, ["--steps", "60", "--save-every", "30"], None),
                            (a.big, ["--pattern", "blocks.rle", "--steps", "1", "--save-every",
                                     "1", "--boundary", "dead"], 0)):
            d = os.path.join(work, str(n))
            os.makedirs(d)
            if "--pattern" in extra:
                blocks_rle(n, os.path.join(d, "blocks.rle"))
            r = subprocess.run(a.mpiexec + ["-n", "2", os.path.abspath(a.golmpi), "--size", str(n),
                                            "--quiet", "--output", "life.h5"] + extra,
                               cwd=d, capture_output=True, text=True, timeout=600)
            if r.returncode != 0:
                fail(f"golmpi at {n}^2: exit {r.returncode}\n{r.stderr}")
            cmd = ["xvfb-run", "-a", "pvpython", view, "--resolution", str(RES),
                   "--screenshot", "shot.png", "life.xmf"] + ([] if t is None else ["--time", str(t)])
            for _ in range(3):  # xvfb-run -a may pick a display another job takes first
                r = subprocess.run(cmd, cwd=d, capture_output=True, text=True, timeout=600)
                if "bad X server connection" not in r.stderr:
                    break
            if r.returncode != 0 or not os.path.exists(os.path.join(d, "shot.png")):
                fail(f"golmpi-view at {n}^2: exit {r.returncode}\n{r.stdout}\n{r.stderr[-3000:]}")
            with h5py.File(os.path.join(d, "life.h5"), "r") as f:
                i = -1 if t is None else list(f["generations"][:]).index(t)
                frame = f["frames"][i]
            for p in os.listdir(d):
                if p.endswith(".h5") and p != "life.h5":
                    os.unlink(os.path.join(d, p)) if t is not None else None
            check(os.path.join(d, "shot.png"), frame, f"{n}^2, bare 'life.xmf'")
            del frame
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("PASS")


main()
