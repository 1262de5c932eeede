#!/usr/bin/env python3
"""Run the code blocks of the README and of the pages a user follows, as a user would, literally.

The pages are README.md, then docs/*.md in name order, then tools/README.md (found beside the
README given). Every fenced code block in them must follow a marker line
`<!-- readme-test: NAME -->`, and every NAME must have a decision in BLOCKS below: run it, or skip
it for the reason given. A new block without a marker, a marker without a decision, a name used
twice, or a decision whose block is gone fails the test, so no snippet escapes unnoticed.

The blocks that run do so in that order (the README's example writes the gun.h5 that
docs/FORMAT.md and tools/README.md read), in one scratch directory that holds links to the
source tree's tests/, bench/, jobs/ and scripts/ (the commands start from the repository root),
with the built golmpi and golmpi-render, and this Python (which has h5py) as `python3`, first on
PATH. Open MPI's mpirun runs oversubscribed and, where needed, as root, through its environment
variables (OMPI_MCA_rmaps_base_oversubscribe, OMPI_ALLOW_RUN_AS_ROOT*); the README says when a
user needs the matching options. Beyond running, the test checks what the blocks claim: the h5py
snippet prints the true live-cell count for u8 and for packed frames, the render examples write
the files they name, and `golmpi --help`'s own example runs too.

    test_readme.py --readme README.md --golmpi build/golmpi [--render build/tools/golmpi-render]

With --fresh-clone it does what a new user does instead: it copies the files git tracks (as they
are in the working tree) into a new repository, runs the README's quick start there literally
(`bash scripts/run.sh`, then the `source` line, but not `scripts/test.sh`, the suite this test
belongs to) with a small main job (GOLMPI_SIZE, GOLMPI_STEPS, GOLMPI_RANKS, which the README
names) and no tests built, checks that golmpi and golmpi-render come from the prefix the script
installed into, that the job wrote into a run directory of its own that git ignores and said
where and how large, and that a second `bash scripts/run.sh` works too; then it runs the blocks
from an empty directory outside the clone with the environment the `source` line gave (PATH,
GOLMPI_SHARE), the examples-large mpirun line too (made short: `--steps 4 --no-output` appended).

    test_readme.py --fresh-clone --readme README.md
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

import h5py
import numpy as np

# NAME -> ("run", why it is cheap and self-contained) or ("skip", why not).
BLOCKS = {
    "quick-start": ("skip", "scripts/run.sh and scripts/test.sh install packages (sudo apt-get), "
                            "build, and run a 16384^2 job or the whole ctest suite, of which this "
                            "test is a part"),
    "examples-large": ("skip", "a 16384^2 run (minutes of CPU, 1.3 GiB of frames) and sbatch, which "
                               "needs a Slurm cluster; the jobs_slurm test runs the batch scripts on "
                               "a private Slurm, and examples-gun runs mpirun at a small size"),
    "examples-gun": ("run", "the Gosper gun at 512^2 and a restart from it, about a second"),
    "output-h5py": ("run", "reads gun.h5; also run on a packed run, checking the live-cell count"),
    "render-examples": ("run", "golmpi-render on gun.h5, and golmpi from the RLE it writes"),
    "population-plot": ("run", "plot_population.py on gun.h5 (skipped without matplotlib)"),
    "gpu-check": ("skip", "scripts/gpu_check.sh needs a GPU (without one it exits 3, 'no GPU: "
                          "nothing to prove'); ctest build_gpu_check runs its --dry-run and that "
                          "exit"),
    "cuda-sim": ("skip", "builds the whole project a second time for the simulated GPU: what "
                         "scripts/test.sh does, whose ctest runs there are this block's commands"),
    "gpu-carry": ("skip", "downloads some 55 Debian packages; ctest rehearsal_bare_machine runs "
                          "this very carry into a bare Debian 12 root"),
    "gpu-install": ("skip", "installs into / of a GPU machine; rehearsal_bare_machine runs it in a "
                            "chroot"),
    "build": ("skip", "configures, builds, tests and installs the whole project: what ctest, "
                      "which runs this test, was built by"),
}

MARKER = re.compile(r"^<!--\s*readme-test:\s*([\w-]+)\s*-->\s*$")
FENCE = re.compile(r"^```(\w*)\s*$")


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def doc_pages(readme):
    """README.md, docs/*.md and tools/README.md beside it, in the order their blocks run."""
    root = os.path.dirname(os.path.abspath(readme))
    pages = [readme] + sorted(glob.glob(os.path.join(root, "docs", "*.md")))
    tools = os.path.join(root, "tools", "README.md")
    if os.path.exists(tools):
        pages.append(tools)
    return [(p, os.path.relpath(p, root)) for p in pages]


def page_blocks(path, label):
    """[(name, language, code, where)] of every fenced block of one page, each with the marker
    before it."""
    lines = open(path).read().splitlines()
    blocks, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        start, lang = i, m.group(1)
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        if j == len(lines):
            fail(f"{label}:{start + 1}: a code block that never closes")
        k = start - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        marker = MARKER.match(lines[k]) if k >= 0 else None
        if not marker:
            fail(f"{label}:{start + 1}: a ```{lang} block with no '<!-- readme-test: NAME -->' "
                 f"line before it: mark it and decide in tests/test_readme.py whether it runs")
        blocks.append((marker.group(1), lang, "\n".join(lines[start + 1:j]) + "\n",
                       f"{label}:{start + 1}"))
        i = j + 1
    return blocks


def read_blocks(pages):
    """Every page's blocks, in page order; each name decided on, once, and every decision used."""
    blocks = [b for path, label in pages for b in page_blocks(path, label)]
    names = [b[0] for b in blocks]
    for name, _, _, where in blocks:
        if name not in BLOCKS:
            fail(f"{where}: block '{name}' has no decision in tests/test_readme.py BLOCKS")
        if names.count(name) > 1:
            fail(f"{where}: block '{name}' is named twice (blocks: {names})")
    for name in BLOCKS:
        if name not in names:
            fail(f"tests/test_readme.py decides on block '{name}', which no page has any more "
                 f"({', '.join(label for _, label in pages)})")
    return blocks


def run_block(name, lang, code, cwd, env):
    print(f"--- {name} ({lang}) ---\n{code}", flush=True)
    if lang == "python":
        cmd = [sys.executable, "-c", code]
    elif lang in ("sh", "bash"):
        cmd = ["bash", "-euo", "pipefail", "-c", code]
    else:
        fail(f"block '{name}': cannot run a ```{lang} block")
    p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    sys.stdout.write(p.stdout)
    sys.stderr.write(p.stderr)
    if p.returncode != 0:
        fail(f"block '{name}' exited {p.returncode}")
    return p.stdout


def fresh_clone(args, work):
    """A new repository holding the tracked files of the tree, as they are now."""
    src = os.path.dirname(os.path.abspath(args.readme))
    files = subprocess.run(["git", "-C", src, "ls-files", "-z"], capture_output=True, text=True,
                           check=True).stdout.split("\0")
    clone = os.path.join(work, "clone")
    for f in filter(None, files):
        if os.path.lexists(os.path.join(src, f)):
            os.makedirs(os.path.dirname(os.path.join(clone, f)), exist_ok=True)
            shutil.copy2(os.path.join(src, f), os.path.join(clone, f), follow_symlinks=False)
    git = ["git", "-C", clone, "-c", "user.name=t", "-c", "user.email=t@t"]
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "clone"]):
        subprocess.run(git + cmd, check=True)
    return clone


def user_env():
    """The user's environment, with what the README says a root or laptop user exports."""
    env = dict(os.environ)
    env["OMPI_MCA_rmaps_base_oversubscribe"] = "1"
    if os.geteuid() == 0:
        env["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
        env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
    env.pop("MPLBACKEND", None)
    return env


def quick_start(clone, env):
    """The README's quick start, literally, but the test suite; returns the shell's environment
    after it (the `source` line's PATH) and its output."""
    code = next(c for n, _, c, _ in page_blocks(os.path.join(clone, "README.md"), "README.md")
                if n == "quick-start")
    lines = [ln for ln in code.splitlines() if ln.strip() and "scripts/test.sh" not in ln]
    if not any(ln.startswith("source ") for ln in lines):
        fail("quick-start: no 'source' line that puts golmpi on PATH")
    env = dict(env, GOLMPI_SIZE="256", GOLMPI_STEPS="20", GOLMPI_RANKS="2",
               GOLMPI_CMAKE_ARGS="-DBUILD_TESTING=OFF -DGOLMPI_ENABLE_CUDA=OFF")
    envfile = os.path.join(clone, "..", "env.out")
    script = "\n".join(lines) + f"\nenv -0 > {envfile}\n"
    print(f"--- quick-start ---\n{script}", flush=True)
    p = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=clone, env=env,
                       capture_output=True, text=True, timeout=1200)
    sys.stdout.write(p.stdout[-4000:])
    sys.stderr.write(p.stderr[-4000:])
    if p.returncode != 0:
        fail(f"quick-start exited {p.returncode}")
    after = dict(kv.split("=", 1) for kv in open(envfile).read().split("\0") if "=" in kv)
    for k in ("GOLMPI_SIZE", "GOLMPI_STEPS", "GOLMPI_RANKS", "GOLMPI_CMAKE_ARGS"):
        after.pop(k, None)
    return after, p.stdout


def check_run_dir(clone, out, seen):
    """The main job said where it wrote and how much, into a new directory under runs/ that git
    ignores."""
    m = re.search(r"^golmpi: this run's files, (\S+) in all, are in (\S+)$", out, re.M)
    if not m:
        fail("scripts/run.sh did not say where its run wrote and how large")
    rundir = m.group(2)
    if os.path.dirname(rundir) != os.path.join(os.path.realpath(clone), "runs") or rundir in seen:
        fail(f"scripts/run.sh wrote into {rundir}, not a new directory under runs/")
    if not os.path.isfile(os.path.join(rundir, "life.h5")):
        fail(f"no life.h5 in {rundir}")
    st = subprocess.run(["git", "-C", clone, "status", "--porcelain"], capture_output=True,
                        text=True).stdout
    if st.strip():
        fail(f"the quick start left files git does not ignore:\n{st}")
    print(f"ok: the main job wrote {m.group(1)} into {rundir}; git status is clean")
    seen.add(rundir)


def fresh_clone_setup(args, work):
    """Clone, the quick start, a second run; returns (cwd, env) for the blocks."""
    clone = os.path.realpath(fresh_clone(args, work))
    env, out = quick_start(clone, user_env())
    seen = set()
    check_run_dir(clone, out, seen)
    if not re.search(r"^  source install/share/golmpi/env\.sh$", out, re.M):
        fail("scripts/run.sh does not end with the README's line 'source install/share/golmpi/env.sh'")
    for tool in ("golmpi", "golmpi-render", "golmpi-view"):
        where = shutil.which(tool, path=env["PATH"])
        if where != os.path.join(clone, "install", "bin", tool):
            fail(f"after the quick start, {tool} on PATH is {where}, not the installed one")
    page = subprocess.run(["man", "-w", "golmpi"], env=env, capture_output=True, text=True)
    if page.stdout.strip() != os.path.join(clone, "install", "share", "man", "man1", "golmpi.1"):
        fail(f"after the quick start, man -w golmpi gives {page.stdout.strip()!r} {page.stderr.strip()}")
    print("ok: golmpi, golmpi-render and golmpi-view on PATH, man golmpi, all from install/")
    pybin = os.path.join(work, "pybin")  # python3 with h5py, as in the other mode
    os.makedirs(pybin)
    os.symlink(sys.executable, os.path.join(pybin, "python3"))
    env["PATH"] = pybin + os.pathsep + env["PATH"]
    again = dict(env, GOLMPI_SIZE="128", GOLMPI_STEPS="8", GOLMPI_RANKS="2",
                 GOLMPI_CMAKE_ARGS="-DBUILD_TESTING=OFF -DGOLMPI_ENABLE_CUDA=OFF")
    p = subprocess.run(["bash", "scripts/run.sh"], cwd=clone, env=again, capture_output=True,
                       text=True, timeout=600)
    if p.returncode != 0:
        fail(f"a second 'bash scripts/run.sh' exited {p.returncode}:\n{p.stdout}\n{p.stderr}")
    check_run_dir(clone, p.stdout, seen)
    print("ok: a second run of scripts/run.sh works, into a directory of its own")
    args.golmpi = os.path.join(clone, "install", "bin", "golmpi")
    args.render = os.path.join(clone, "install", "bin", "golmpi-render")
    if env.get("GOLMPI_SHARE") != os.path.join(clone, "install", "share", "golmpi"):
        fail(f"after the quick start, GOLMPI_SHARE is {env.get('GOLMPI_SHARE')!r}, not the installed "
             "share/golmpi")
    # the blocks from a directory of the user's own, away from the clone: the README's examples
    # hold from any directory
    elsewhere = os.path.join(work, "elsewhere")
    os.makedirs(elsewhere)
    return elsewhere, env


def scratch_env(args, work):
    """PATH with golmpi, golmpi-render and this Python as python3 first; mpirun allowed to
    oversubscribe and run as root."""
    bindir = os.path.join(work, ".bin")
    os.makedirs(bindir)
    os.symlink(os.path.abspath(args.golmpi), os.path.join(bindir, "golmpi"))
    if args.render:
        os.symlink(os.path.abspath(args.render), os.path.join(bindir, "golmpi-render"))
    os.symlink(sys.executable, os.path.join(bindir, "python3"))
    src = os.path.dirname(os.path.abspath(args.readme))
    for d in ("tests", "bench", "jobs", "scripts"):
        os.symlink(os.path.join(src, d), os.path.join(work, d))
    # what env.sh names GOLMPI_SHARE once installed, from the source tree
    share = os.path.join(work, ".share")
    os.makedirs(share)
    for installed, d in (("patterns", "tests/patterns"), ("jobs", "jobs"), ("bench", "bench")):
        os.symlink(os.path.join(src, d), os.path.join(share, installed))
    env = user_env()
    env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
    env["GOLMPI_SHARE"] = share
    return env


def live_cells(path, t=-1):
    with h5py.File(path, "r") as f:
        frame = f["frames"][t]
        width = int(f.attrs["width"])
        enc = f.attrs["encoding"]
        if (enc.decode() if isinstance(enc, bytes) else enc) == "packed-lsb":
            frame = np.unpackbits(frame, axis=1, bitorder="little")[:, :width]
        return int(frame[:, :width].sum(dtype=np.int64)), int(f["generations"][t])


def check_h5py_output(out, path, what):
    m = re.search(r"^(\d+) (\d+) live cells$", out.strip().splitlines()[-1])
    want, gen = live_cells(path)
    if not m or (int(m.group(1)), int(m.group(2))) != (gen, want):
        fail(f"h5py snippet on {what}: printed {out.strip()!r}, expected '{gen} {want} live cells'")
    print(f"ok: the h5py snippet prints {want} live cells at generation {gen} for {what}")


def check_after(name, code, out, work, env, args):
    """What each run block claims, beyond exiting 0."""
    if name == "examples-gun":
        for f in ("gun.h5", "gun.xmf", "gun_000300.h5", "more.h5"):
            if not os.path.exists(os.path.join(work, f)):
                fail(f"examples-gun: {f} was not written")
    elif name == "output-h5py":
        check_h5py_output(out, os.path.join(work, "gun.h5"), "the u8 gun run")
        # the same snippet on packed frames: the case the README once got wrong
        packed = os.path.join(work, "packed")
        os.makedirs(packed)
        gun = re.search(r"^mpirun .*\n?.*--output gun\.h5$", README_TEXT, re.M)
        if not gun:
            fail("output-h5py: the README has no 'mpirun ... --output gun.h5' example to run packed")
        cmd = gun.group(0).replace("\\\n", " ") + " --frame-format packed"
        p = subprocess.run(["bash", "-euo", "pipefail", "-c", cmd], cwd=packed, env=env)
        if p.returncode != 0:
            fail(f"packed gun run failed: {cmd}")
        out = run_block(name + " (packed)", "python", code, packed, env)
        check_h5py_output(out, os.path.join(packed, "gun.h5"), "the packed gun run")
    elif name == "render-examples":
        for f in ("gun.png", "gun_150.png", "gun_anim.png", "gun_frame_000000.png",
                  "gun_frame_000090.png", "gun_region.rle", "region.h5"):
            if not os.path.exists(os.path.join(work, f)):
                fail(f"render-examples: {f} was not written")
        with h5py.File(os.path.join(work, "gun.h5"), "r") as f:
            region = f["frames"][-1][245:335, 232:336]
        with h5py.File(os.path.join(work, "region.h5"), "r") as f:
            if not np.array_equal(f["frames"][0], region):
                fail("render-examples: golmpi started from gun_region.rle is not the cropped frame")
        print("ok: the render examples wrote their files; golmpi reads the RLE back exactly")
    elif name == "population-plot":
        if not os.path.getsize(os.path.join(work, "gun_population.png")):
            fail("population-plot: empty PNG")


def help_example(args, work, env):
    """golmpi --help's example of a pattern run must run as written."""
    text = subprocess.run([args.golmpi, "--help"], capture_output=True, text=True).stdout
    m = re.search(r"^  (golmpi --pattern .*\\\n.*)$", text, re.M)
    if not m:
        fail("golmpi --help shows no '--pattern' example")
    cmd = m.group(1).replace("\\\n", " ")
    d = os.path.join(work, "help")
    os.makedirs(d)
    os.symlink(os.path.join(os.path.dirname(os.path.abspath(args.readme)), "tests"),
               os.path.join(d, "tests"))
    print(f"--- golmpi --help example ---\n{cmd}", flush=True)
    if subprocess.run(["bash", "-c", cmd], cwd=d, env=env).returncode != 0:
        fail(f"golmpi --help's example fails: {cmd}")
    print("ok: golmpi --help's example runs")


README_TEXT = ""


def main():
    global README_TEXT
    ap = argparse.ArgumentParser()
    ap.add_argument("--readme", required=True)
    ap.add_argument("--golmpi")
    ap.add_argument("--fresh-clone", action="store_true")
    ap.add_argument("--render", help="golmpi-render; without it the render blocks are skipped")
    args = ap.parse_args()
    if not args.golmpi and not args.fresh_clone:
        ap.error("--golmpi or --fresh-clone")
    README_TEXT = open(args.readme).read()
    blocks = read_blocks(doc_pages(args.readme))
    try:
        import matplotlib  # noqa: F401
        have_mpl = True
    except ImportError:
        have_mpl = False
    work = tempfile.mkdtemp(prefix="golmpi_readme_")
    try:
        if args.fresh_clone:
            cwd, env = fresh_clone_setup(args, work)
        else:
            cwd, env = work, scratch_env(args, work)
        ran, skipped = [], []
        for name, lang, code, where in blocks:
            decision, why = BLOCKS[name]
            if args.fresh_clone and name == "quick-start":
                decision, why = "skip", "ran above, in the clone"
            if args.fresh_clone and name == "examples-large":
                large = [ln.split("#")[0].strip() for ln in code.splitlines()
                         if ln.startswith("mpirun ")]
                code, decision = "\n".join(ln + " --steps 4 --no-output" for ln in large), "run"
            if decision == "run" and name == "render-examples" and not args.render:
                decision, why = "skip", "golmpi-render is not built here (no libpng)"
            if decision == "run" and name == "population-plot" and not have_mpl:
                decision, why = "skip", "this Python has no matplotlib"
            if decision == "skip":
                print(f"--- {name} ({where}): skipped: {why}")
                skipped.append(name)
                continue
            out = run_block(name, lang, code, cwd, env)
            check_after(name, code, out, cwd, env, args)
            ran.append(name)
        help_example(args, cwd, env)
        print(f"ran {len(ran)} blocks ({', '.join(ran)}); skipped {len(skipped)} "
              f"({', '.join(skipped)})")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("PASS")


if __name__ == "__main__":
    main()
