#!/usr/bin/env python3
"""golmpi's NVTX ranges, checked through an injection library (tests/nvtx_inject.c).

Runs golmpi on the CPU backend under mpiexec with NVTX_INJECTION64_PATH set, then reads the
per-rank event logs and checks what core/trace.h promises: domain "golmpi"; threads "main" and
"hdf5-writer"; per chunk one "generations g0-g1" range on the main thread holding one "halo"
range per generation; on the writer thread, per chunk file one "create <file>", one "write <file>
frame <i>" per frame, i = 0, 1, ... in order, and one "finish <file>"; and every
range popped; per chunk one "wait slot <s>" range, and on the CPU one "unpack slot <s>" per
frame, inside the chunk's range. With --backend cuda (a GPU test: exit 77 without one), also the stream names
"compute", "comm", "copy0", "copy1", one "d2h slot <s>" range per frame inside the chunk's range,
and "halo" (MPI) or "halo enqueue" (NCCL) ranges.
"""
import argparse
import collections
import os
import re
import shlex
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reference  # noqa: E402  (the frame schedule and chunk names)


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def parse_log(path):
    events = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            parts = line.rstrip("\n").split("\t")
            if len(parts) < 2:
                fail(f"{path}:{n}: malformed line {line!r}")
            events.append((int(parts[0]), parts[1], parts[2:]))
    return events


def check_rank(path, rank, chunks, steps, present_files, backend):
    events = parse_log(path)
    where = f"rank {rank} ({os.path.basename(path)})"
    if not events or events[0][1] != "init":
        fail(f"{where}: the injection library did not initialise")

    domains = [e[2][0] for e in events if e[1] == "domain_create"]
    if domains.count("golmpi") != 1:
        fail(f"{where}: domain 'golmpi' created {domains.count('golmpi')} times, expected once ({domains})")

    names = {}
    for tid, kind, args in events:
        if kind == "name_thread":
            named = int(args[0])
            if named != tid:
                fail(f"{where}: thread {tid} named thread {named} '{args[1]}': expected its own gettid")
            names[named] = args[1]
    by_name = collections.defaultdict(list)
    for tid, name in names.items():
        by_name[name].append(tid)
    for want in ("main", "hdf5-writer"):
        if len(by_name.get(want, [])) != 1:
            fail(f"{where}: expected one thread named '{want}', thread names: {names}")
    main_tid, writer_tid = by_name["main"][0], by_name["hdf5-writer"][0]
    if main_tid == writer_tid:
        fail(f"{where}: 'main' and 'hdf5-writer' are the same thread")

    # Replay pushes and pops per thread: balanced, never popping an empty stack, and each range
    # with its parent, so halo ranges can be attributed to the chunk that holds them.
    stacks = collections.defaultdict(list)
    closed = []  # (tid, domain, message, parent message or None)
    for tid, kind, args in events:
        if kind == "push":
            stacks[(tid, args[0])].append(args[1])
        elif kind == "pop":
            st = stacks[(tid, args[0])]
            if not st:
                fail(f"{where}: pop with no open range on thread {tid} ({names.get(tid, '?')}), domain {args[0]}")
            msg = st.pop()
            closed.append((tid, args[0], msg, st[-1] if st else None))
    for (tid, dom), st in stacks.items():
        if st:
            fail(f"{where}: ranges left open on thread {tid} ({names.get(tid, '?')}), domain {dom}: {st}")
    if any(dom != "golmpi" for _, dom, _, _ in closed):
        fail(f"{where}: ranges outside the golmpi domain: {sorted(set(d for _, d, _, _ in closed))}")

    pushes = [(tid, args[1]) for tid, kind, args in events if kind == "push"]
    gen_ranges = [(tid, m) for tid, m in pushes if m.startswith("generations ")]
    got = []
    for tid, m in gen_ranges:
        mm = re.fullmatch(r"generations (\d+)-(\d+)", m)
        if not mm:
            fail(f"{where}: malformed range name '{m}'")
        if tid != main_tid:
            fail(f"{where}: '{m}' on thread {tid} ({names.get(tid, '?')}), not on 'main'")
        got.append((int(mm.group(1)), int(mm.group(2))))
    # chunk c computes from the previous chunk's last frame up to its own last frame
    want, g = [], 0
    for c in chunks:
        want.append((g, c[-1]))
        g = c[-1]
    if got != want:
        fail(f"{where}: 'generations' ranges {got}, expected one per chunk {want}")
    # The stages of --stats' chunks list (src/chunk_log.h) one for one: per chunk one "wait slot
    # <c % 2>" range (the wait for a free slot) inside its "generations" range, and on the CPU one
    # "unpack slot <c % 2>" range per frame (the frame time; "d2h slot" on the GPU, below).
    for c, (g0, g1) in enumerate(want):
        inside = collections.Counter(m for _, _, m, parent in closed
                                     if parent == f"generations {g0}-{g1}")
        if inside[f"wait slot {c % 2}"] != 1:
            fail(f"{where}: ranges inside 'generations {g0}-{g1}' {dict(inside)}, expected one "
                 f"'wait slot {c % 2}'")
        if backend == "cpu" and inside[f"unpack slot {c % 2}"] != len(chunks[c]):
            fail(f"{where}: ranges inside 'generations {g0}-{g1}' {dict(inside)}, expected "
                 f"{len(chunks[c])} 'unpack slot {c % 2}'")

    halos = collections.Counter(parent for tid, _, m, parent in closed if m == "halo")
    if backend == "cuda":
        # Halos may be captured once into a CUDA graph and replayed, so their count is not
        # per generation; the frame copies are one per frame.
        streams = sorted(args[1] for _, kind, args in events if kind == "name_stream")
        if streams != ["comm", "compute", "copy0", "copy1"]:
            fail(f"{where}: CUDA streams named {streams}, expected comm, compute, copy0, copy1")
        d2h = [(m, parent) for tid, _, m, parent in closed if m.startswith("d2h ")]
        nframes = sum(len(c) for c in chunks)
        if len(d2h) != nframes or any(not re.fullmatch(r"d2h slot [01]", m) for m, _ in d2h):
            fail(f"{where}: d2h ranges {[m for m, _ in d2h]}, expected one 'd2h slot <0|1>' per frame ({nframes})")
        for c, (g0, g1) in zip(chunks, want):
            n = sum(1 for _, parent in d2h if parent == f"generations {g0}-{g1}")
            if n != len(c):
                fail(f"{where}: {n} d2h ranges inside 'generations {g0}-{g1}', expected {len(c)}")
        # NCCL only enqueues the exchange on the host: its range is "halo enqueue"
        enqueues = sum(1 for _, _, m, _ in closed if m == "halo enqueue")
        if not halos and not enqueues:
            fail(f"{where}: no 'halo' or 'halo enqueue' ranges")
        halos = collections.Counter()
        want_halos = []
    else:
        want_halos = want
    for g0, g1 in want_halos:
        n = halos.get(f"generations {g0}-{g1}", 0)
        if n != g1 - g0:
            fail(f"{where}: {n} 'halo' ranges inside 'generations {g0}-{g1}', expected one per generation ({g1 - g0})")
    if backend == "cpu" and sum(halos.values()) < steps:
        fail(f"{where}: {sum(halos.values())} halo ranges for {steps} generations")

    writer = [(tid, m) for tid, m in pushes if re.match(r"(create|write|finish) ", m)]
    for tid, m in writer:
        if tid != writer_tid:
            fail(f"{where}: '{m}' on thread {tid} ({names.get(tid, '?')}), not on 'hdf5-writer'")
    # each chunk file: created, written a frame at a time as the frames come, finished
    want_ranges = []
    for c in chunks:
        name = reference.chunk_name("life", c)
        want_ranges += [f"create {name}"] + [f"write {name} frame {i}" for i in range(len(c))]
        want_ranges.append(f"finish {name}")
    got_ranges = [m for _, m in writer]
    if got_ranges != want_ranges:
        fail(f"{where}: the writer's ranges {got_ranges}, expected {want_ranges}")
    writes = [m for m in got_ranges if m.startswith("write ")]
    expect = sorted(reference.chunk_name("life", c) for c in chunks)
    if sorted(present_files) != expect:
        fail(f"chunk files on disk {sorted(present_files)}, expected {expect}")
    print(f"ok: {where}: {len(pushes)} ranges, {len(got)} chunks, {sum(halos.values())} halos, "
          f"{len(writes)} writes, threads {sorted(names.values())}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--golmpi", required=True)
    ap.add_argument("--inject", required=True, help="the injection library (libnvtx_inject.so)")
    ap.add_argument("--launcher", required=True, help="e.g. 'mpiexec --oversubscribe -n'")
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--backend", choices=("cpu", "cuda"), default="cpu")
    args = ap.parse_args()
    size, steps, save_every, chunk = 96, 12, 3, 2
    chunks = reference.chunk_schedule(0, steps, save_every, chunk)
    with tempfile.TemporaryDirectory(prefix="golmpi_nvtx_") as tmp:
        log = os.path.join(tmp, "nvtx")
        env = dict(os.environ, NVTX_INJECTION64_PATH=os.path.abspath(args.inject), GOLMPI_NVTX_LOG=log,
                   OMP_NUM_THREADS="1")
        cmd = shlex.split(args.launcher) + [str(args.ranks), args.golmpi, "--backend", args.backend,
                                            "--size", str(size), "--steps", str(steps),
                                            "--save-every", str(save_every), "--chunk", str(chunk),
                                            "--seed", "3", "--quiet", "--output", os.path.join(tmp, "life.h5")]
        print("+ " + " ".join(shlex.quote(c) for c in cmd), flush=True)
        p = subprocess.run(cmd, env=env)
        if args.backend == "cuda" and p.returncode == 3:  # GOL_EXIT_NOGPU
            print("SKIP: no usable GPU")
            sys.exit(77)
        if p.returncode != 0:
            fail(f"golmpi exited with {p.returncode}")
        logs = sorted(n for n in os.listdir(tmp) if n.startswith("nvtx."))
        want_logs = [f"nvtx.rank{r}" for r in range(args.ranks)]
        if logs != want_logs:
            fail(f"NVTX logs {logs}, expected {want_logs}: was the injection library loaded?")
        present = [n for n in os.listdir(tmp) if re.fullmatch("life" + reference.CHUNK_NAME, n)]
        for r in range(args.ranks):
            check_rank(os.path.join(tmp, f"nvtx.rank{r}"), r, chunks, steps, present, args.backend)
    print("PASS")


if __name__ == "__main__":
    main()
