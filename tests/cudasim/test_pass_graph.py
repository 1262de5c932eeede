#!/usr/bin/env python3
"""A pass's dependency graph on the simulated GPU: golmpi runs with GOLMPI_SIM_TRACE, and every
pass of its trace (tests/cudasim/sim_trace.c: each operation enqueued, with its vector clock) must
have exactly the order the design states (docs/DESIGN.md, "CUDA backend"):
  - the bands of pass P+1 after the interior of P (the fork), and after P's bands and exchange
    (the comm stream's order);
  - the interior of P+1 after the interior, the bands and the exchange of P (the join): the next
    pass reads the rows they wrote;
  - the exchange of P after the bands of P: it sends the rows they wrote;
  - and the interior of P not after the bands or the exchange of P, nor before the bands: the
    interior never waits for its own pass's edges, nor they for it.
Passes are told apart by the trace alone: the interior is the update kernel enqueued on the
compute stream (the lowest-priority stream that is no graph's own lane), a band any other update
kernel, the exchange an NCCL operation; a pass is replayed from a graph when its bands run on a
graph's lane.

  test_pass_graph.py --golmpi EXE [--expect exchange,quiet,graph,eager] [--mutant EXE --missing
                     EDGE] GOLMPI_ARGS... --mpiexec MPIEXEC [MPIEXEC_FLAGS...]
golmpi runs on one rank, --no-output.
--expect: kinds of pass the run must contain (a pass that exchanges, one that does not, one
replayed from a graph, one enqueued eagerly). --mutant: the same run with a golmpi that lacks an
order; the check must then fail on EDGE (one of the edge names printed), which proves it can."""
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
    """The passes, in order: each {interior, bands, exchange, graph}."""
    updates = [o for o in ops if o["kind"] == "kernel" and o["name"] in UPDATES]
    if not updates:
        return []
    compute_prio = max(o["prio"] for o in updates if not o["internal"])
    compute = {o["slot"] for o in updates if not o["internal"] and o["prio"] == compute_prio}
    out, bands, nccl = [], [], []
    for o in ops:
        if o["kind"] == "nccl":
            nccl.append(o)
        elif o["kind"] == "kernel" and o["name"] in UPDATES:
            if o["slot"] in compute:
                if out and nccl:
                    out[-1]["exchange"] = nccl
                out.append({"interior": o, "bands": bands, "exchange": [],
                            "graph": any(b["internal"] for b in bands)})
                bands, nccl = [], []
            else:
                if out and nccl:
                    out[-1]["exchange"] = nccl
                    nccl = []
                bands.append(o)
    if out and nccl:
        out[-1]["exchange"] = nccl
    return out


def check(ops, expect, say):
    """Missing or extra orders, as (edge name, message)."""
    ps = passes(ops)
    bad = []
    if len(ps) < 2:
        return [("passes", f"only {len(ps)} passes in the trace")]
    for i, p in enumerate(ps):
        tag = f"pass {i} ({'graph' if p['graph'] else 'eager'}, " \
              f"{'exchange' if p['exchange'] else 'no exchange'})"
        if not p["bands"]:
            bad.append(("bands", f"{tag}: no band kernel"))
        for b in p["bands"]:
            for e in p["exchange"]:
                if not before(b, e):
                    bad.append(("band->exchange", f"{tag}: the exchange is not after band {b['name']}"))
        # (the interior may end before the exchange is enqueued: a host that waited for it, as
        # the watchdog's polls may, orders them so, and nothing waits on the device for that)
        for o in p["bands"] + p["exchange"]:
            if before(o, p["interior"]) or (o in p["bands"] and before(p["interior"], o)):
                bad.append(("interior||edges", f"{tag}: the interior is ordered with {o['name']} "
                                               "of its own pass"))
        if i + 1 == len(ps):
            continue
        q = ps[i + 1]
        for o in [p["interior"]] + p["bands"] + p["exchange"]:
            for b in q["bands"]:
                if not before(o, b):
                    edge = "fork" if o is p["interior"] else "comm-order"
                    bad.append((edge, f"{tag}: {o['name']} is not before the next pass's band"))
            if not before(o, q["interior"]):
                edge = "interior-order" if o is p["interior"] else "join"
                bad.append((edge, f"{tag}: {o['name']} is not before the next pass's interior"))
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
    if p.returncode != 0:
        sys.exit(f"golmpi failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
    bad = check(ops, expect, lambda m: print("golmpi:", m))
    for _, m in bad[:20]:
        print("FAIL:", m)
    if bad:
        sys.exit(1)
    print("golmpi: every pass ordered as designed")
    if not a.mutant:
        return
    p, ops = run(a.mutant, golmpi_args, a.mpiexec)
    bad = check(ops, expect, lambda m: print("mutant:", m))
    edges = sorted({e for e, _ in bad})
    print(f"mutant (exit {p.returncode}): missing or extra orders: {', '.join(edges) or 'none'}")
    if a.missing not in edges:
        sys.exit(f"FAIL: the mutant's trace should lack the {a.missing} order")
    print(f"mutant: the check finds the {a.missing} order missing, as it must")


if __name__ == "__main__":
    main()
