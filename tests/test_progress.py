"""Progress in batch logs: under mpiexec, stderr is a pipe or a file, not a terminal, so rank 0
writes a plain progress line every --progress seconds and one at the end; --progress 0 and
--quiet write none; the frames do not depend on it."""
import argparse, os, re, subprocess, sys, tempfile, time

LINE = re.compile(r"^golmpi: generation (\d+)/(\d+) \(([\d.]+)%\), current rate ([\d.e+-]+) cell updates/s, "
                  r"ETA (\d+) s$")


def run(args, golmpi, mpiexec, tmp, name):
    err_path = os.path.join(tmp, name + ".err")
    t0 = time.monotonic()
    with open(err_path, "w") as err:
        rc = subprocess.call(mpiexec + ["-n", "2", golmpi, "--backend", "cpu"] + args,
                             stdout=subprocess.DEVNULL, stderr=err, cwd=tmp)
    with open(err_path) as f:
        lines = f.read().splitlines()
    if rc != 0:
        sys.exit("FAIL %s: exit %d\n%s" % (name, rc, "\n".join(lines)))
    run.seconds = time.monotonic() - t0
    return [l for l in lines if l.startswith("golmpi: generation")], lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--golmpi", required=True)
    ap.add_argument("--mpiexec", nargs=argparse.REMAINDER, required=True)
    a = ap.parse_args()
    fails = []
    with tempfile.TemporaryDirectory() as tmp:
        # a run of a second or more: several lines at a 0.05 s interval
        base = ["--size", "1024", "--steps", "20000", "--no-output"]
        prog, everything = run(base + ["--progress", "0.05"], a.golmpi, a.mpiexec, tmp, "on")
        parsed = [LINE.match(l) for l in prog]
        if not prog or not all(parsed):
            fails.append("expected well-formed progress lines, got:\n" + "\n".join(everything))
        else:
            gens = [int(m.group(1)) for m in parsed]
            # a line at least every 0.05 s once a piece ends (pieces are 1/1000 of the run), so
            # a run this long has several whatever the machine's speed
            if len(prog) < 2 and run.seconds > 0.5:
                fails.append("only %d progress line(s) in a %.1f s run at --progress 0.05"
                             % (len(prog), run.seconds))
            if gens != sorted(gens):
                fails.append("generations not increasing: %s" % gens)
            if gens[-1] != 20000 or parsed[-1].group(3) != "100.0":
                fails.append("the last line is not generation 20000/20000 at 100%%: %s" % prog[-1])
            if any(int(m.group(2)) != 20000 for m in parsed):
                fails.append("a line does not say /20000")
        # the summary names its two rates; the progress line's current rate is neither
        out = subprocess.run(a.mpiexec + ["-n", "2", a.golmpi, "--backend", "cpu", "--size", "256",
                                          "--steps", "50", "--no-output"], capture_output=True,
                             text=True, cwd=tmp).stdout
        for name in ("wall time .* whole-run rate [\d.e+]+ cell updates/s",
                     "compute .* compute rate [\d.e+]+ cell updates/s"):
            if not re.search("^  " + name, out, re.M):
                fails.append("the summary has no line '%s':\n%s" % (name, out))
        prog, _ = run(base + ["--progress", "0"], a.golmpi, a.mpiexec, tmp, "off")
        if prog:
            fails.append("--progress 0 still wrote %d line(s)" % len(prog))
        prog, _ = run(base + ["--quiet"], a.golmpi, a.mpiexec, tmp, "quiet")
        if prog:
            fails.append("--quiet still wrote %d progress line(s)" % len(prog))
        # the default interval (10 s) still gives the closing line
        prog, _ = run(["--size", "64", "--steps", "10", "--no-output"], a.golmpi, a.mpiexec, tmp,
                      "default")
        if len(prog) != 1 or not prog[0].startswith("golmpi: generation 10/10 (100.0%)"):
            fails.append("a short run with the default interval: expected one closing line, got %s"
                         % prog)
    if fails:
        sys.exit("FAIL\n" + "\n".join(fails))
    print("progress lines ok")


main()
