#!/usr/bin/env python3
"""cmake/kernel_resources.py on crafted ptxas reports and tables: each branch of the check must be
able to fail. A table with a spill fails, one past 255 registers fails (ptxas never reports that
today, so only a crafted table shows the branch works), a clean one passes, and `table` reads the
reports of the sources it is given, not one a deleted source left behind."""
import os
import subprocess
import sys
import tempfile

TOOL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cmake", "kernel_resources.py")
HEAD = "arch\tkernel\tregisters\tstack\tspill_stores\tspill_loads\n"


def run(*args):
    p = subprocess.run([sys.executable, TOOL, *args], capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def report(name, regs, spill=0):
    return (f"ptxas info    : Compiling entry function '{name}' for 'sm_90'\n"
            f"ptxas info    : Function properties for {name}\n"
            f"    0 bytes stack frame, {spill} bytes spill stores, {spill} bytes spill loads\n"
            f"ptxas info    : Used {regs} registers, used 0 barriers\n")


def main():
    bad = 0

    def expect(what, rc, out, want_rc, want_text):
        nonlocal bad
        ok = rc == want_rc and want_text in out
        print(f"{'ok' if ok else 'FAIL'}: {what} (exit {rc}, wanted {want_rc} and '{want_text}')")
        if not ok:
            print(out)
        bad += not ok

    with tempfile.TemporaryDirectory() as d:
        t = os.path.join(d, "t.tsv")
        for what, row, want_rc, text in (
                ("a clean table passes", "sm_90\tk<1>\t159\t0\t0\t0\n", 0, "0 failing"),
                ("a spill fails", "sm_90\tk<1>\t255\t8\t8\t4\n", 1, "FAIL: spills"),
                ("256 registers fail", "sm_90\tk<1>\t256\t0\t0\t0\n", 1, "more than 255 registers"),
                ("no spill report fails", "sm_90\tk<1>\t100\t?\t?\t?\n", 1, "no spill report")):
            open(t, "w").write(HEAD + row)
            expect(what, *run("check", t), want_rc, text)
        expect("an empty table fails", *(open(t, "w").write(HEAD) and run("check", t)), 1,
               "no kernel instance")
        expect("no table (CPU build) skips", *run("check"), 77, "skipped")
        # a report of a source no longer built: present in the object directory, not read
        objs = os.path.join(d, "objs", "cuda")
        os.makedirs(objs)
        open(os.path.join(objs, "kept.cu.o.ptxas"), "w").write(report("_Z4keptv", 100))
        open(os.path.join(objs, "deleted.cu.o.ptxas"), "w").write(report("_Z7deletedv", 300, 16))
        rc, out = run("table", t, os.path.join(d, "objs"), "cuda/kept.cu")
        expect("table of the built source", rc, out, 0, "")
        rc, out = run("check", t)
        expect("the deleted source's report is not read", rc, out, 0, "1 kernel instances, 0 failing")
        rc, out = run("table", t, os.path.join(d, "objs"), "cuda/kept.cu", "cuda/deleted.cu")
        rc, out = run("check", t)
        expect("read when listed, it fails", rc, out, 1, "2 kernel instances, 1 failing")
        rc, out = run("table", t, os.path.join(d, "objs"), "cuda/missing.cu")
        expect("a listed source without a report fails", rc, out, 1, "no ptxas report")
    print(f"{bad} failing")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
