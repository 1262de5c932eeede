#!/usr/bin/env python3
"""The registers and spills of every CUDA kernel instance, as ptxas reports them when it builds
them (cmake/kernel_resources.cmake), and the check that none spills.

  kernel_resources.py compile COMPILER ARGS...
      The CUDA compiler launcher: runs the compile as given; ptxas's report (nvcc
      --resource-usage) goes to OBJECT.ptxas beside the object (-o OBJECT), not to the terminal.
      Every other line the compiler prints passes through, and its exit status is the compile's.
  kernel_resources.py table OUT DIR SOURCE...
      Writes OUT, one line a kernel instance and architecture, from the reports of this build's
      CUDA sources (SOURCE: each one's path as the object directory DIR mirrors it, its report
      DIR/SOURCE.o.ptxas; a report left by a source no longer built is not read):
      arch, kernel (demangled, without namespace and parameters), registers, stack frame bytes,
      spill store bytes, spill load bytes (tab-separated, a header line first).
  kernel_resources.py check [OUT]
      The test: fails when an instance spills (spill stores or loads above 0) or uses more
      registers than ptxas may give a thread (255: every kernel's __launch_bounds__ asks for at
      most 256 threads a block and no minimum of blocks an SM, so its budget is the hardware's).
      Prints the table. Without OUT (a build with no CUDA kernels): exits 77, skipped."""
import os
import re
import subprocess
import sys

REG_BUDGET = 255
FUNC = re.compile(r"ptxas info\s*: Compiling entry function '(\S+)' for '(\w+)'")
SPILL = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
USED = re.compile(r"ptxas info\s*: Used (\d+) registers")
PTXAS_LINE = re.compile(r"^(ptxas info\s*:|\s+\d+ bytes stack frame)")


def compile_(argv):
    out = argv[argv.index("-o") + 1] if "-o" in argv else None
    p = subprocess.run(argv, stderr=subprocess.PIPE, text=True)
    report = [l for l in p.stderr.splitlines(True) if PTXAS_LINE.match(l)]
    sys.stderr.write("".join(l for l in p.stderr.splitlines(True) if not PTXAS_LINE.match(l)))
    if out and p.returncode == 0:
        with open(out + ".ptxas", "w") as f:
            f.write("".join(report))
    return p.returncode


def demangle(names):
    r = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True)
    out = r.stdout.splitlines() if r.returncode == 0 else names
    short = []
    for n in out:
        n = n.replace("(anonymous namespace)::", "")
        n = n[5:] if n.startswith("void ") else n  # a template's return type
        depth, end = 0, len(n)
        for i, ch in enumerate(n):  # cut the parameter list: the first '(' outside <>
            depth += ch == "<"
            depth -= ch == ">"
            if ch == "(" and depth == 0:
                end = i
                break
        short.append(n[:end])
    return short


def table(out, top, *sources):
    rows = []
    reports = [os.path.join(top, src + ".o.ptxas") for src in sources]
    missing = [r for r in reports if not os.path.exists(r)]
    if missing or not reports:
        print(f"kernel_resources.py: no ptxas report {', '.join(missing) or '(no source given)'}: "
              "was it compiled through this launcher?", file=sys.stderr)
        return 1
    for report in reports:
        func = arch = spill = None
        for line in open(report):
            m = FUNC.search(line)
            if m:
                func, arch, spill = m.group(1), m.group(2), None
            m = SPILL.search(line)
            if m:
                spill = m.groups()
            m = USED.search(line)
            if m and func:
                rows.append([arch, func, m.group(1)] + list(spill or ("?", "?", "?")))
                func = None
    names = demangle([r[1] for r in rows])
    for r, n in zip(rows, names):
        r[1] = n
    rows.sort(key=lambda r: (r[0], r[1]))
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        f.write("arch\tkernel\tregisters\tstack\tspill_stores\tspill_loads\n")
        for r in rows:
            f.write("\t".join(r) + "\n")
    os.replace(tmp, out)
    return 0


def check(path):
    if not path:
        print("skipped: no CUDA kernels compiled in this build (a CPU-only build, or the "
              "simulated GPU's host code)")
        return 77
    lines = open(path).read().splitlines()[1:]
    if not lines:
        print(f"{path}: no kernel instance recorded: was the CUDA code built with "
              "cmake/kernel_resources.cmake's launcher?")
        return 1
    bad = 0
    print(f"{'arch':6} {'kernel':34} {'regs':>5} {'stack':>6} {'spill st':>9} {'spill ld':>9}")
    for line in lines:
        arch, kernel, regs, stack, st, ld = line.split("\t")
        why = []
        if not (st.isdigit() and ld.isdigit()):
            why.append("no spill report")
        elif int(st) or int(ld):
            why.append("spills")
        if int(regs) > REG_BUDGET:
            why.append(f"more than {REG_BUDGET} registers")
        print(f"{arch:6} {kernel:34} {regs:>5} {stack:>6} {st:>9} {ld:>9}"
              + (f"  FAIL: {', '.join(why)}" if why else ""))
        bad += bool(why)
    print(f"{len(lines)} kernel instances, {bad} failing")
    return 1 if bad else 0


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "compile":
        sys.exit(compile_(args))
    if cmd == "table":
        sys.exit(table(*args))
    if cmd == "check":
        sys.exit(check(args[0] if args else None))
    sys.exit(f"kernel_resources.py: unknown command {cmd}")
