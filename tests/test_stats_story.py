#!/usr/bin/env python3
"""--stats tells the story: a `status` (finished, or stopped by a signal at generation
G with exit 4), and a resume into the same series keeps every segment's figures (`segments`).

A 2-rank run is stopped by SIGUSR1 to mpiexec once it is under way, then resumed with the same
command plus --restart life.h5 (into the same --output and --stats): the JSON must then hold
both segments, the first stopped at G, the second from G to the end, each with its own times and
rates; a plain run holds one segment. About 10 s.

    test_stats_story.py --golmpi build/golmpi --mpiexec mpiexec --oversubscribe ...
"""
import argparse, json, os, re, signal, subprocess, sys, tempfile, time

STEPS = 40000
ARGS = ["--backend", "cpu", "--size", "2048", "--steps", str(STEPS), "--save-every", "10000",
        "--chunk", "4", "--output", "life.h5", "--stats", "s.json", "--progress", "0.1"]


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def stats(where):
    with open(os.path.join(where, "s.json")) as f:
        return json.load(f)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--golmpi", required=True)
    ap.add_argument("--mpiexec", nargs=argparse.REMAINDER, required=True)
    a = ap.parse_args()
    a.golmpi = os.path.abspath(a.golmpi)
    with tempfile.TemporaryDirectory() as tmp:
        err = open(os.path.join(tmp, "err"), "w+")
        p = subprocess.Popen(a.mpiexec + ["-n", "2", a.golmpi] + ARGS, cwd=tmp, stderr=err,
                             stdout=subprocess.DEVNULL, process_group=0)
        deadline = time.monotonic() + 60
        while p.poll() is None and time.monotonic() < deadline:
            if "golmpi: generation" in open(err.name).read():
                break
            time.sleep(0.05)
        if p.poll() is not None:
            fail("the run ended before it could be stopped:\n" + open(err.name).read())
        os.kill(p.pid, signal.SIGUSR1)
        try:
            rc = p.wait(timeout=120)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            fail("the stopped run did not end")
        text = open(err.name).read()
        m = re.search(r"stopped by a signal at generation (\d+)", text)
        if rc != 4 or not m:
            fail(f"SIGUSR1: exit {rc}, expected 4 and a stop line:\n{text}")
        g = int(m.group(1))
        s = stats(tmp)
        want = {"state": "stopped", "exit_code": 4, "generation": g,
                "message": f"stopped by a signal at generation {g}"}
        if s.get("status") != want:
            fail(f"after the stop: status {s.get('status')}, want {want}")
        if [x["status"]["state"] for x in s.get("segments", [])] != ["stopped"]:
            fail(f"after the stop: segments {s.get('segments')}")
        r = subprocess.run(a.mpiexec + ["-n", "2", a.golmpi] + ARGS + ["--restart", "life.h5"],
                           cwd=tmp, capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            fail(f"the resume exited {r.returncode}:\n{r.stderr}")
        s = stats(tmp)
        if s["status"] != {"state": "finished", "exit_code": 0, "generation": STEPS,
                           "message": f"finished at generation {STEPS}"}:
            fail(f"after the resume: status {s['status']}")
        segs = s["segments"]
        spans = [(x["generation_start"], x["generation_end"], x["status"]["state"]) for x in segs]
        if spans != [(0, g, "stopped"), (g, STEPS, "finished")]:
            fail(f"segments {spans}, want [(0, {g}, stopped), ({g}, {STEPS}, finished)]")
        for x in segs:
            for k in ("wall_s", "compute_s", "whole_run_cell_updates_per_s",
                      "compute_cell_updates_per_s", "start_time", "end_time"):
                if k not in x:
                    fail(f"segment {x['generation_start']}..: no {k}")
        if segs[1]["wall_s"] != s["wall_s"] or segs[0]["wall_s"] == s["wall_s"]:
            fail("the segments do not keep each run's own wall time")
        # a run that continues nothing has one segment, even when its --stats file exists
        r = subprocess.run(a.mpiexec + ["-n", "2", a.golmpi, "--size", "64", "--steps", "10",
                                        "--no-output", "--stats", "s.json"], cwd=tmp,
                           capture_output=True, text=True, timeout=120)
        if r.returncode != 0 or len(stats(tmp)["segments"]) != 1:
            fail(f"a fresh run: exit {r.returncode}, segments {stats(tmp).get('segments')}")
    print(f"PASS: stopped at {g}, resumed to {STEPS}: status and both segments in --stats")


main()
