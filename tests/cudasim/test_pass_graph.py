#!/usr/bin/env python3
"""A pass's dependency graph on the simulated GPU: golmpi runs with GOLMPI_SIM_TRACE, and the
passes of its trace (tests/cudasim/sim_trace.c: each operation enqueued, with its vector clock)
must have the edges the design states (docs/DESIGN.md, "CUDA backend"). Each assertion relates
operations on two different streams (two ops on one stream are always ordered) and is one that
enqueue order alone cannot settle (a clock is taken at enqueue, so an op can never be ordered
after one enqueued later): each can fail, and tests/cudasim.cmake registers, per edge, a mutant
of cuda/backend_cuda.c that breaks that edge alone and that this check must fail on that
edge alone.
  fork         a split pass's bands come after the previous pass's compute-stream launch
               (they read the rows it wrote)
  join         a pass's compute-stream launch comes after the previous pass's bands (it reads
               the rows they wrote)
  join-halo    a pass of one launch comes after the previous exchange (it reads the halo rows)
  join-only    the interior of a split eager pass does not come after the previous pass's
               exchange (other than through its own bands, which is `interior`'s): the next
               pass waits only for the rows it reads
  interior     the interior does not come after its own pass's bands (nor after its exchange,
               which is queued after it: enqueue order settles that one)
  one-launch   a pass that does not exchange is one launch on the compute stream: no bands
  split        a pass that exchanges computes its bands on another stream than its interior
  expect       the run contains the kinds of pass --expect names
Passes are told apart by the trace alone: the compute stream is the lowest-priority stream that
is no graph's own lane; a pass is one update kernel on it, with the update kernels on other
streams enqueued since the last one (its bands) and the NCCL operations after it (its
exchange); a pass is replayed from a graph when its bands run on a graph's lane. A copy, a set
or another kernel between two passes (a load, a random start) cuts the chain: the first pass
after it is checked with none before it. A graph launch waits for everything before it on its
stream: join-only is not asked of a replayed pass.

  test_pass_graph.py --golmpi EXE [--expect exchange,quiet,graph,eager] [--mutant EXE --missing
                     EDGE] GOLMPI_ARGS... --mpiexec MPIEXEC [MPIEXEC_FLAGS...]
golmpi runs on one rank, --no-output. Exit status: 0 every edge holds; 1 an edge is missing (a
line "FAIL EDGE: ..." each); 2 golmpi failed with every edge of its trace holding. --mutant: the
check runs again, as a child process, on the mutant's trace; it must exit 1 with EDGE the only
edge missing."""
import argparse
import os
import subprocess
import sys
import tempfile

UPDATES = ("life_rows", "life_edges", "life_deep")


def parse(path):
    ops = []
    for line in open(path):
        head, _, rest = line.partition(" | vc")
        fields = head.split(" | ")[0].split()
        if fields[0] != "op":
            continue
        vc = {}
        for e in rest.split():
            slot, tick = e.split(":")
            vc[int(slot)] = int(tick)
        ops.append({"slot": int(fields[1]), "tick": int(fields[2]), "prio": int(fields[3]),
                    "internal": int(fields[4]), "kind": fields[5], "name": fields[6],
                    "vc": vc, "seq": len(ops)})
    return ops


def before(a, b):
    """a is ordered before b (b's clock covers a)."""
    return b["vc"].get(a["slot"], 0) >= a["tick"]


def passes(ops):
    """The passes, in order: each {main, bands, exchange, graph, after_cut}."""
    updates = [o for o in ops if o["kind"] == "kernel" and o["name"] in UPDATES]
    if not updates:
        return []
    compute_prio = max(o["prio"] for o in updates if not o["internal"])
    compute = {o["slot"] for o in updates if not o["internal"] and o["prio"] == compute_prio}
    out, bands, cut = [], [], True
    for o in ops:
        update = o["kind"] == "kernel" and o["name"] in UPDATES
        if o["kind"] == "nccl" and out and not bands and not cut:
            out[-1]["exchange"].append(o)
        elif update and o["slot"] in compute:
            out.append({"main": o, "bands": bands, "exchange": [], "after_cut": cut,
                        "graph": any(b["internal"] for b in bands)})
            bands, cut = [], False
        elif update:
            bands.append(o)
        elif o["kind"] in ("copy", "set", "kernel"):
            cut, bands = True, []
    return out


def check(ops, expect, say):
    """Missing edges, as (edge name, message)."""
    ps = passes(ops)
    bad = []
    if len(ps) < 2:
        return [("passes", f"only {len(ps)} passes in the trace")]
    for i, p in enumerate(ps):
        tag = f"pass {i} ({'graph' if p['graph'] else 'eager'}, " \
              f"{'exchange' if p['exchange'] else 'no exchange'})"
        if p["exchange"] and not p["bands"]:
            bad.append(("split", f"{tag}: exchanges, but its bands are not on another stream"))
        if not p["exchange"] and p["bands"]:
            bad.append(("one-launch", f"{tag}: no exchange, yet {len(p['bands'])} bands"))
        for b in p["bands"]:
            if before(b, p["main"]):
                bad.append(("interior", f"{tag}: the interior waits for its own {b['name']}"))
        q = ps[i - 1] if i and not p["after_cut"] else None
        if q is None:
            continue
        for b in p["bands"]:
            if not before(q["main"], b):
                bad.append(("fork", f"{tag}: band {b['name']} is not after the last pass"))
        for b in q["bands"]:
            if not before(b, p["main"]):
                bad.append(("join", f"{tag}: not after the last pass's band {b['name']}"))
        for e in q["exchange"]:
            if not p["bands"] and not before(e, p["main"]):
                bad.append(("join-halo", f"{tag}: one launch, not after the last exchange"))
            # (an interior after its own bands is after this exchange too: that is `interior`)
            own = any(before(b, p["main"]) for b in p["bands"])
            if p["bands"] and not p["graph"] and not own and before(e, p["main"]):
                bad.append(("join-only", f"{tag}: the interior waits for the last exchange"))
    kinds = {"exchange": any(p["exchange"] for p in ps),
             "quiet": any(not p["exchange"] for p in ps[:-1]),
             "graph": any(p["graph"] for p in ps),
             "eager": any(not p["graph"] for p in ps)}
    for k in expect:
        if not kinds[k]:
            bad.append(("expect", f"no {k} pass in the trace"))
    say(f"{len(ps)} passes: {sum(bool(p['exchange']) for p in ps)} exchange, "
        f"{sum(p['graph'] for p in ps)} replayed from a graph")
    return bad


def run(golmpi, args, mpiexec):
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, GOLMPI_SIM_TRACE=d)
        p = subprocess.run(mpiexec + ["-n", "1", golmpi] + args + ["--no-output", "--quiet"],
                           env=env, capture_output=True, text=True, timeout=300)
        path = os.path.join(d, "trace.rank0")
        ops = parse(path) if os.path.exists(path) else []
    return p, ops


def main():
    ap = argparse.ArgumentParser(allow_abbrev=False)  # golmpi's options pass through
    ap.add_argument("--golmpi", required=True)
    ap.add_argument("--mutant")
    ap.add_argument("--missing")
    ap.add_argument("--expect", default="")
    ap.add_argument("--mpiexec", nargs=argparse.REMAINDER, required=True)
    a, golmpi_args = ap.parse_known_args()
    expect = [k for k in a.expect.split(",") if k]
    p, ops = run(a.golmpi, golmpi_args, a.mpiexec)
    bad = check(ops, expect, lambda m: print("golmpi:", m))
    for edge, m in bad[:20]:
        print(f"FAIL {edge}: {m}")
    if bad:
        print(f"golmpi exit {p.returncode}")
        sys.exit(1)
    if p.returncode != 0:
        print(f"golmpi failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
        sys.exit(2)
    print("golmpi: every pass ordered as designed")
    if not a.mutant:
        return
    me = [sys.executable, os.path.abspath(__file__), "--golmpi", a.mutant, "--expect", a.expect]
    c = subprocess.run(me + golmpi_args + ["--mpiexec"] + a.mpiexec, capture_output=True,
                       text=True, timeout=600)
    edges = sorted({line.split()[1].rstrip(":") for line in c.stdout.splitlines()
                    if line.startswith("FAIL ")})
    print(c.stdout, end="")
    print(f"mutant: the check exits {c.returncode}, edges missing: {', '.join(edges) or 'none'}")
    if c.returncode != 1 or edges != [a.missing]:
        sys.exit(f"FAIL: on the mutant the check must exit 1 with {a.missing} alone missing")
    print(f"mutant: the check finds the {a.missing} edge alone missing, as it must")


if __name__ == "__main__":
    main()
