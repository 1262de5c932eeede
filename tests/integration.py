#!/usr/bin/env python3
"""End-to-end checks of golmpi under mpiexec against tests/reference.py, exact to the cell.

    integration.py --mpiexec "mpiexec --oversubscribe -n" --golmpi build/golmpi CASE [--backend cpu]
                   [--halo-depth K|auto]

--halo-depth runs every golmpi of the case with that halo depth (core/depth.h): the frames must be
the same at every depth, so each case checks them against the reference as it is.

Exit 0 when every frame matches, 1 on the first wrong cell, 77 when --backend cuda finds no GPU
(golmpi's exit code 3) or when GOLMPI_CPU_ISA names a vector instruction set this CPU lacks (golmpi
refuses it with exit code 2; a refusal on a CPU that has it is a failure)."""
import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reference  # noqa: E402

SKIP = 77


class Skip(Exception):
    pass


def cpu_lacks(isa):
    """Whether /proc/cpuinfo lacks the flag of a GOLMPI_CPU_ISA kernel (base runs everywhere)."""
    flag = {"avx2": "avx2", "avx512": "avx512f"}.get(isa)
    if flag is None:
        return False
    try:
        with open("/proc/cpuinfo") as f:
            return not any(line.startswith("flags") and flag in line.split() for line in f)
    except OSError:
        return True


class Runner:
    def __init__(self, mpiexec, golmpi, backend, extra):
        self.mpiexec = shlex.split(mpiexec)
        self.golmpi = golmpi
        self.backend = backend
        self.extra = extra
        self.env = None  # the environment of golmpi's runs (None: this one's)

    def run(self, ranks, args, workdir, expect=0):
        cmd = self.mpiexec + [str(ranks), self.golmpi, "--backend", self.backend, "--quiet"]
        cmd += self.extra + [str(a) for a in args]
        p = subprocess.run(cmd, cwd=workdir, capture_output=True, text=True, timeout=600,
                           env=self.env)
        if p.returncode == 3 and self.backend == "cuda":
            # golmpi's own line, not the banner mpiexec adds after it
            said = [ln for ln in p.stderr.splitlines() if ln.startswith("golmpi")] or [""]
            raise Skip("no GPU: " + said[0])
        isa = (self.env or os.environ).get("GOLMPI_CPU_ISA", "")
        if p.returncode == 2 and f"GOLMPI_CPU_ISA={isa}: " in p.stderr and cpu_lacks(isa):
            raise Skip(f"this CPU has no {isa}: " + p.stderr.strip().splitlines()[-1])
        if p.returncode != expect:
            sys.exit(f"FAIL: {' '.join(cmd)}\nexit {p.returncode}, expected {expect}\n"
                     f"stdout:\n{p.stdout}\nstderr:\n{p.stderr}")
        return p

    def frames(self, ranks, args, workdir, base="life"):
        """Run golmpi and return ({generation: cells [H, W]}, root attributes) from the index."""
        self.last = self.run(ranks, list(args) + ["--output", base + ".h5"], workdir)
        with h5py.File(os.path.join(workdir, base + ".h5"), "r") as f:
            attrs = dict(f.attrs)
            gens = [int(g) for g in f["generations"][:]]
            data = f["frames"][:]
            width = int(attrs["width"])
            packed = f["frames"].shape[2] != width
        out = {}
        for g, fr in zip(gens, data):
            out[g] = reference.unpack(fr, width) if packed else fr
        assert len(out) == len(gens), "a generation appears twice"
        return out, attrs


def compare(got, want, what):
    if got.shape != want.shape:
        sys.exit(f"FAIL {what}: shape {got.shape}, expected {want.shape}")
    bad = np.argwhere(got != want)
    if len(bad):
        y, x = bad[0]
        sys.exit(f"FAIL {what}: {len(bad)} wrong cells, first at row {y} col {x}: "
                 f"got {got[y, x]}, expected {want[y, x]}")


def check_against_reference(frames, start, rule, torus, what):
    """Evolve the expected start naively and compare every saved frame."""
    gens = sorted(frames)
    grid = start
    g = gens[0]
    compare(frames[g], grid, f"{what} generation {g}")
    for target in gens[1:]:
        grid = reference.evolve(grid, rule, torus, target - g)
        g = target
        compare(frames[target], grid, f"{what} generation {g}")
    return gens


def case_reference(r, tmp, width, height, ranks, boundary, rule, fmt="u8", chunk=3, steps=23,
                   every=4, seed=7, density=0.4):
    args = ["--width", width, "--height", height, "--boundary", boundary, "--rule", rule,
            "--steps", steps, "--save-every", every, "--chunk", chunk, "--seed", seed,
            "--density", density, "--frame-format", fmt]
    frames, attrs = r.frames(ranks, args, tmp)
    start = reference.random_grid(seed, density, width, height)
    gens = check_against_reference(frames, start, reference.parse_rule(rule),
                                   boundary == "torus", f"{width}x{height} P={ranks} {boundary} {rule}")
    want = reference.frame_generations(0, steps, every)
    if gens != want:
        sys.exit(f"FAIL: generations {gens}, expected {want}")
    for key, want in (("width", width), ("height", height), ("ranks", ranks)):
        if int(attrs[key]) != want:
            sys.exit(f"FAIL: attribute {key} = {attrs[key]}, expected {want}")


def case_across(r, tmp):
    """Frames identical for P = 1..4 and for several chunk sizes, both frame formats."""
    base = ["--width", 131, "--height", 37, "--steps", 30, "--save-every", 3, "--seed", 99,
            "--rule", "B36/S23", "--boundary", "torus"]
    want = None
    for ranks, chunk, fmt in ((1, 1, "u8"), (2, 4, "u8"), (3, 11, "packed"), (4, 2, "u8"),
                              (4, 3, "packed"), (2, 100, "packed")):
        sub = os.path.join(tmp, f"p{ranks}c{chunk}{fmt}")
        os.mkdir(sub)
        frames, _ = r.frames(ranks, base + ["--chunk", chunk, "--frame-format", fmt], sub)
        if want is None:
            want = frames
            continue
        if sorted(frames) != sorted(want):
            sys.exit(f"FAIL: P={ranks} chunk={chunk}: generations {sorted(frames)}")
        for g in want:
            compare(frames[g], want[g], f"P={ranks} chunk={chunk} {fmt} generation {g}")


def case_random_start(r, tmp):
    """One seed, one grid, whatever the rank count, equal to the independent hash."""
    want = reference.random_grid(12345, 0.3, 100, 41)
    for ranks in (1, 2, 3, 4):
        sub = os.path.join(tmp, f"p{ranks}")
        os.mkdir(sub)
        frames, _ = r.frames(ranks, ["--width", 100, "--height", 41, "--steps", 0, "--seed",
                                     12345, "--density", 0.3], sub)
        compare(frames[0], want, f"random start P={ranks}")


def case_restart(r, tmp):
    """A run stopped at generation 20 and restarted equals one that ran 0..45 straight."""
    common = ["--save-every", 5, "--chunk", 2, "--boundary", "dead", "--rule", "B3/S23"]
    whole, _ = r.frames(3, ["--width", 90, "--height", 50, "--steps", 45, "--seed", 5] + common,
                        tmp, "whole")
    r.run(2, ["--width", 90, "--height", 50, "--steps", 20, "--seed", 5, "--output", "first.h5"]
          + common, tmp)
    last = reference.chunk_schedule(0, 20, 5, 2)[-1]  # the chunk that holds generation 20
    chunk_last = os.path.join(tmp, reference.chunk_name("first", last))
    if not os.path.exists(chunk_last):
        sys.exit(f"FAIL: expected chunk file {chunk_last}; have {sorted(os.listdir(tmp))}")
    # restart from the index once and from the last chunk file once, on other rank counts
    for src, ranks, base in (("first.h5", 4, "second"), (chunk_last, 1, "third")):
        frames, attrs = r.frames(ranks, ["--restart", src, "--steps", 25] + common[:4], tmp, base)
        if sorted(frames) != reference.frame_generations(20, 45, 5):
            sys.exit(f"FAIL: restart generations {sorted(frames)}")
        for g in frames:
            compare(frames[g], whole[g], f"restart from {src}, generation {g}")


def rle_cells(path):
    """A small independent RLE reader for the test patterns."""
    rows, x, y, n = {}, 0, 0, ""
    body = [l for l in open(path) if not l.startswith("#") and not l.lower().startswith("x")]
    for ch in "".join(body):
        if ch.isdigit():
            n += ch
        elif ch in "bo$":
            k = int(n or 1)
            n = ""
            if ch == "o":
                for i in range(k):
                    rows.setdefault(y, set()).add(x + i)
            if ch == "$":
                y, x = y + k, 0
            else:
                x += k
        elif ch == "!":
            break
    return rows


def case_pattern(r, tmp):
    """The Gosper gun from an RLE file, placed with --at, against the naive reference."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "patterns", "gosper.rle")
    width, height, at = 70, 48, (3, 5)
    start = np.zeros((height, width), dtype=np.uint8)
    for y, xs in rle_cells(path).items():
        for x in xs:
            start[at[1] + y, at[0] + x] = 1
    if start.sum() != 36:
        sys.exit(f"FAIL: the Gosper gun has {start.sum()} cells, expected 36")
    frames, attrs = r.frames(3, ["--pattern", path, "--at", f"{at[0]},{at[1]}", "--width", width,
                                 "--height", height, "--boundary", "dead", "--steps", 120,
                                 "--save-every", 30, "--chunk", 2], tmp)
    check_against_reference(frames, start, reference.LIFE, False, "gosper gun")
    # LifeWiki: the gun has period 30 and sends out one glider (5 cells) per period
    pops = [int(frames[g].sum()) for g in (30, 60, 90)]
    if not (pops[1] - pops[0] == 5 and pops[2] - pops[1] == 5):
        sys.exit(f"FAIL: gun populations at 30/60/90: {pops}; expected +5 per period")


def case_r_pentomino(r, tmp):
    """LifeWiki: the R-pentomino stabilises at generation 1103 with population 116. On a 1024^2
    dead grid its gliders never reach the edge by then, so the plane's answer holds."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "r_pentomino.rle")
    frames, _ = r.frames(3, ["--pattern", path, "--size", 1024, "--boundary", "dead", "--steps",
                             1103, "--save-every", 1000, "--chunk", 5], tmp)
    pops = {g: int(f.sum()) for g, f in frames.items()}
    if pops != {0: 5, 1000: pops.get(1000), 1103: 116}:
        sys.exit(f"FAIL: R-pentomino populations {pops}; expected 5 at 0 and 116 at 1103")


def case_depth_refused(r, tmp):
    """An explicit --halo-depth deeper than the shortest slab is refused with exit 2 and a message
    that names the rank and the most it can take; auto shrinks to fit (here to 1 row a rank)."""
    base = ["--width", 77, "--height", 23, "--steps", 4, "--save-every", 2]
    p = r.run(4, base + ["--halo-depth", 6, "--output", "x.h5"], tmp, expect=2)
    want = "--halo-depth 6: each rank sends its neighbours its 6 first and last rows, but rank 3 " \
           "owns only 5; use --halo-depth 5 or less (or auto), or fewer ranks"
    if want not in p.stderr:
        sys.exit(f"FAIL: expected '{want}'; stderr:\n{p.stderr}")
    if os.path.exists(os.path.join(tmp, "x.h5")):
        sys.exit("FAIL: a refused run wrote its index")
    frames, _ = r.frames(4, ["--width", 30, "--height", 5, "--steps", 9, "--save-every", 3,
                             "--seed", 3, "--boundary", "dead", "--halo-depth", "auto"], tmp)
    check_against_reference(frames, reference.random_grid(3, 0.5, 30, 5),
                            reference.LIFE, False, "auto on one-row slabs")


def case_pieces(r, tmp):
    """One rank cuts its advance calls into pieces unlike the others' (the debug setting
    GOLMPI_DEBUG_PIECE="rank:n" of src/run.c), and the frames still match the reference. On the GPU
    every rank must run the same generations eagerly (the timed halo sample) and the rest from the
    CUDA graph, or NCCL pairs an eager exchange with a captured one; the run goes past a second
    sample (every 1024 generations after the load) and frames cut calls too."""
    width, height, steps, every, seed, rule = 77, 23, 2100, 350, 21, "B3/S23"
    start = reference.random_grid(seed, 0.35, width, height)
    for ranks, piece, boundary in ((3, "1:7", "torus"), (2, "0:1", "dead"), (2, "1:1000", "torus")):
        sub = os.path.join(tmp, f"p{ranks}_{piece.replace(':', '_')}")
        os.mkdir(sub)
        r.env = dict(os.environ, GOLMPI_DEBUG_PIECE=piece)
        try:
            frames, _ = r.frames(ranks, ["--width", width, "--height", height, "--steps", steps,
                                         "--save-every", every, "--chunk", 2, "--seed", seed,
                                         "--density", 0.35, "--boundary", boundary, "--rule", rule],
                                 sub)
        finally:
            r.env = None
        rank, n = piece.split(":")
        if f"rank {rank} advances in pieces of {n} generation" not in r.last.stderr:
            sys.exit(f"FAIL: GOLMPI_DEBUG_PIECE={piece} was not taken up; stderr:\n{r.last.stderr}")
        check_against_reference(frames, start, reference.parse_rule(rule), boundary == "torus",
                                f"pieces {piece} P={ranks} {boundary}")


def case_transfers(r, tmp):
    """Every way the frames can travel (io/tuning.h, GOLMPI_IO_TRANSFER) writes the same cells:
    direct (O_DIRECT from the slots) where every rank's rows are whole 4 KiB pages, falling back
    to independent MPI-IO where they are not, independent and collective as asked; --stats
    io_transfer says which went. 97 rows split unevenly (49/48, 33/32/32); /frames is over 64 KiB,
    so HDF5 starts it on a 1 MiB boundary."""
    steps, every, seed, density = 8, 4, 3, 0.45
    for transfer, ranks, width, fmt, want in (
            ("direct", 1, 4096, "u8", "direct"), ("direct", 2, 4096, "u8", "direct"),
            ("direct", 3, 4096, "u8", "direct"), ("direct", 2, 32768, "packed", "direct"),
            ("direct", 2, 4100, "u8", "independent"), ("independent", 2, 4096, "u8", "independent"),
            ("collective", 3, 4096, "u8", "collective")):
        what = f"GOLMPI_IO_TRANSFER={transfer} P={ranks} {width}x97 {fmt}"
        sub = os.path.join(tmp, f"{transfer}{ranks}{width}{fmt}")
        os.mkdir(sub)
        r.env = dict(os.environ, GOLMPI_IO_TRANSFER=transfer)
        try:
            frames, _ = r.frames(ranks, ["--width", width, "--height", 97, "--steps", steps,
                                         "--save-every", every, "--chunk", 3, "--seed", seed,
                                         "--density", density, "--frame-format", fmt,
                                         "--stats", "s.json"], sub)
        finally:
            r.env = None
        start = reference.random_grid(seed, density, width, 97)
        check_against_reference(frames, start, reference.parse_rule("B3/S23"), True, what)
        with open(os.path.join(sub, "s.json")) as f:
            got = json.load(f)["io_transfer"]
        if got != want:
            sys.exit(f"FAIL {what}: --stats io_transfer {got!r}, expected {want!r}")


CASES = {
    "transfers": case_transfers,
    "pieces": case_pieces,
    "r_pentomino": case_r_pentomino,
    "random_start": case_random_start,
    "across": case_across,
    "restart": case_restart,
    "pattern": case_pattern,
    "depth_refused": case_depth_refused,
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mpiexec", required=True, help='e.g. "mpiexec --oversubscribe -n"')
    ap.add_argument("--golmpi", required=True)
    ap.add_argument("--backend", default="cpu")
    ap.add_argument("--extra", default="", help="more golmpi arguments, e.g. --halo mpi")
    ap.add_argument("--halo-depth", default=None, help="every run with this --halo-depth")
    ap.add_argument("case")
    a = ap.parse_args()
    extra = shlex.split(a.extra) + (["--halo-depth", a.halo_depth] if a.halo_depth else [])
    r = Runner(a.mpiexec, os.path.abspath(a.golmpi), a.backend, extra)
    with tempfile.TemporaryDirectory(prefix="golmpi-test-") as tmp:
        try:
            m = re.fullmatch(r"ref_(\d+)x(\d+)_p(\d)_(torus|dead)_(B\d*S\d*)(_packed)?", a.case)
            if m:
                rule = m.group(5).replace("S", "/S")
                case_reference(r, tmp, int(m.group(1)), int(m.group(2)), int(m.group(3)),
                               m.group(4), rule, "packed" if m.group(6) else "u8")
            elif a.case in CASES:
                CASES[a.case](r, tmp)
            else:
                sys.exit(f"unknown case {a.case}")
        except Skip as e:
            print(f"SKIP: {e}")
            return SKIP
    depth = f", --halo-depth {a.halo_depth}" if a.halo_depth else ""
    print(f"PASS {a.case} ({a.backend}{depth})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
