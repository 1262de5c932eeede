"""Progress in batch logs: under mpiexec, stderr is a pipe or a file, not a terminal, so rank 0
writes a plain progress line every --progress seconds and one at the end; --progress 0 and
--quiet write none; the frames do not depend on it."""
import argparse, os, re, subprocess, sys, tempfile

LINE = re.compile(r"^golmpi: generation (\d+)/(\d+) \(([\d.]+)%\), ([\d.e+-]+) cell updates/s, "
                  r"ETA (\d+) s$")


def run(args, golmpi, mpiexec, tmp, name):
    err_path = os.path.join(tmp, name + ".err")
    with open(err_path, "w") as err:
        rc = subprocess.call(mpiexec + ["-n", "2", golmpi, "--backend", "cpu"] + args,
                             stdout=subprocess.DEVNULL, stderr=err, cwd=tmp)
    with open(err_path) as f:
        lines = f.read().splitlines()
    if rc != 0:
        sys.exit("FAIL %s: exit %d\n%s" % (name, rc, "\n".join(lines)))
    return [l for l in lines if l.startswith("golmpi: generation")], lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--golmpi", required=True)
    ap.add_argument("--mpiexec", nargs=argparse.REMAINDER, required=True)
    a = ap.parse_args()
    fails = []
    with tempfile.TemporaryDirectory() as tmp:
        # long enough for several lines at a 0.05 s interval on any machine
        base = ["--size", "512", "--steps", "4000", "--no-output"]
        prog, everything = run(base + ["--progress", "0.05"], a.golmpi, a.mpiexec, tmp, "on")
        parsed = [LINE.match(l) for l in prog]
        if not prog or not all(parsed):
            fails.append("expected well-formed progress lines, got:\n" + "\n".join(everything))
        else:
            gens = [int(m.group(1)) for m in parsed]
            if len(prog) < 2:
                fails.append("only %d progress line(s) in a run at --progress 0.05" % len(prog))
            if gens != sorted(gens):
                fails.append("generations not increasing: %s" % gens)
            if gens[-1] != 4000 or parsed[-1].group(3) != "100.0":
                fails.append("the last line is not generation 4000/4000 at 100%%: %s" % prog[-1])
            if any(int(m.group(2)) != 4000 for m in parsed):
                fails.append("a line does not say /4000")
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
