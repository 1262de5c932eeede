#!/usr/bin/env python3
"""Checks for tests/test_cluster.sh.

  check_cluster.py start INDEX --seed S --size N
      the first frame is the reference's random start (tests/reference.py), cell for cell
  check_cluster.py table LOG --nodes N --per-node K [--hosts n1,n3] [--last]
      every start-up table in a job's log: ranks in blocks of K on hosts n1..nN, each host's
      local ranks 0..K-1; and Open MPI's BTL lines: tcp between every two nodes, shared memory
      (vader) inside a node, never tcp inside one
  check_cluster.py series INDEX --same-as REF
      a resumed series: the same generations and frames as REF, the same chunk files, each named
      once in the index, no unfinished file left
"""
import argparse
import os
import re
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import reference  # noqa: E402


def fail(msg):
    print("check_cluster: FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def start(a):
    with h5py.File(a.index, "r") as f:
        frame0 = f["frames"][0]
        gen0 = int(f["generations"][0])
        density = float(f.attrs.get("density", 0.5))
    if gen0 != 0:
        fail(f"{a.index}: the first frame is generation {gen0}")
    want = reference.random_grid(a.seed, density, a.size, a.size)
    if not np.array_equal(frame0, want):
        fail(f"{a.index}: generation 0 differs from the reference's random start in "
             f"{int((frame0 != want).sum())} cells")
    print(f"check_cluster: ok: generation 0 is the reference's (seed {a.seed}, density {density})")


ROW = re.compile(r"^  rank +(\d+) +local +(\d+) +host +(\S+) ")
BTL = re.compile(r"^\[(\S+):\d+\] mca: bml: Using (\w+) btl for send to \[\[\d+,\d+\],(\d+)\] on node (\S+)")


def table(a):
    tables, cur = [], None
    pairs = {}
    with open(a.log, errors="replace") as f:
        for line in f:
            if line.startswith("golmpi: using "):
                cur = []
                tables.append(cur)
                continue
            m = ROW.match(line)
            if m and cur is not None:
                cur.append((int(m.group(1)), int(m.group(2)), m.group(3)))
                continue
            m = BTL.match(line)
            if m:
                src, btl, dst = m.group(1), m.group(2), m.group(4)
                pairs.setdefault((src, dst), set()).add(btl)
    if not tables:
        fail(f"{a.log}: no start-up table")
    nodes = a.hosts.split(",") if a.hosts else [f"n{i}" for i in range(1, a.nodes + 1)]
    a.nodes = len(nodes)
    if a.last:
        tables = tables[-1:]
    for t in tables:
        if len(t) != a.nodes * a.per_node:
            fail(f"{a.log}: {len(t)} ranks in the table, expected {a.nodes * a.per_node}")
        for rank, local, host in t:
            # the script maps ranks in blocks (mpirun --map-by slot): rank r on node r / K
            if host != nodes[rank // a.per_node] or local != rank % a.per_node:
                fail(f"{a.log}: rank {rank}: host {host}, local rank {local}; expected host "
                     f"{nodes[rank // a.per_node]}, local rank {rank % a.per_node}")
        for h in nodes:
            locals_ = sorted(l for _, l, host in t if host == h)
            if locals_ != list(range(a.per_node)):
                fail(f"{a.log}: host {h} has local ranks {locals_}")
    print(f"check_cluster: ok: {len(tables)} start-up table(s): {a.per_node} ranks on each of "
          f"{' '.join(nodes)}, local ranks 0..{a.per_node - 1} on each")
    if a.nodes == 1:
        return
    for s in nodes:
        for d in nodes:
            got = pairs.get((s, d), set())
            if s != d and got != {"tcp"}:
                fail(f"{a.log}: from {s} to {d} Open MPI uses {sorted(got) or 'no BTL it reported'}, "
                     "not tcp")
            if s == d and "tcp" in got:
                fail(f"{a.log}: tcp inside node {s}")
            if s == d and a.per_node > 1 and "vader" not in got:
                fail(f"{a.log}: no shared memory (vader) inside node {s}")
    print(f"check_cluster: ok: Open MPI's BTL: tcp between every two of the {a.nodes} nodes, "
          "vader inside each")


def series(a):
    def read(path):
        with h5py.File(path, "r") as f:
            names = [os.path.basename(s.file_name) for s in f["frames"].virtual_sources()]
            return f["generations"][...].tolist(), f["frames"][...], names

    gens, frames, names = read(a.index)
    rgens, rframes, rnames = read(a.same_as)
    d = os.path.dirname(os.path.abspath(a.index))
    base = os.path.basename(a.index)[:-3]
    on_disk = sorted(n for n in os.listdir(d) if re.fullmatch(re.escape(base) + reference.CHUNK_NAME, n))
    if gens != rgens:
        fail(f"{a.index}: generations {gens}, the uninterrupted run has {rgens}")
    for i, g in enumerate(gens):
        if not np.array_equal(frames[i], rframes[i]):
            fail(f"{a.index}: generation {g} differs from the uninterrupted run's "
                 f"({int((frames[i] != rframes[i]).sum())} cells)")
    if len(set(names)) != len(names) or sorted(set(names)) != on_disk:
        fail(f"{a.index}: the index names {names}; the directory holds {on_disk}")
    if sorted(set(names)) != sorted(set(rnames)):
        fail(f"{a.index}: chunk files {sorted(set(names))}, the uninterrupted run wrote {sorted(set(rnames))}")
    left = [n for n in os.listdir(d) if n.endswith(".part")]
    if left:
        fail(f"{d}: unfinished files left: {left}")
    print(f"check_cluster: ok: {len(gens)} frames {gens[0]}..{gens[-1]} in {len(on_disk)} chunk files, "
          "each once in the index, bit-identical to the uninterrupted run")


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="what", required=True)
    p = sub.add_parser("start")
    p.add_argument("index")
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--size", type=int, required=True)
    p = sub.add_parser("table")
    p.add_argument("log")
    p.add_argument("--nodes", type=int, default=0)
    p.add_argument("--per-node", type=int, required=True)
    p.add_argument("--hosts", help="the job's hosts, comma-separated, instead of n1..nN")
    p.add_argument("--last", action="store_true", help="the last table only (a requeued job's)")
    p = sub.add_parser("series")
    p.add_argument("index")
    p.add_argument("--same-as", required=True)
    a = ap.parse_args()
    {"start": start, "table": table, "series": series}[a.what](a)


if __name__ == "__main__":
    main()
