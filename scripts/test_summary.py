#!/usr/bin/env python3
"""The verdict of scripts/test.sh: one summary of every stage, every test that failed and every
test that skipped, each with its reason, read from the JUnit files ctest wrote (--output-junit).

  test_summary.py RESULTS_DIR

RESULTS_DIR holds `stages` (a line "STAGE<TAB>STATE" for each stage in the order they ran; STATE
"ran", "left out (why)", or the failure that stopped it), and for each stage STAGE.*.xml (its
ctest runs) and STAGE.findings (a line per failure the stage found outside ctest, such as a
sanitizer report). Exit 1 when anything failed: a test, a finding, a
stage that stopped, or a skip whose reason a package could fix.

A test may skip only for a reason no package can fix: no GPU, a CPU-only build, a CPU without an
instruction set, no root or no permission for namespaces and mounts, one CPU. Any other skip (a
missing command or Python module) means scripts/deps.sh --test left something out, and fails.
"""
import glob
import os
import re
import sys
import xml.etree.ElementTree as ET

# The reasons no package can fix; every other skip fails the run
ALLOWED_SKIP = re.compile(
    r"GPU|CUDA|NVIDIA|CPU-only build|this CPU has no|\broot\b|permission|"
    r"namespace here|veth links|UTS namespaces|one CPU|no /proc", re.I)


def skip_reason(out):
    lines = [ln.strip() for ln in out.splitlines() if ln.strip()]
    for ln in lines:
        m = re.search(r"\bskip(?:ped)?\b\s*:?\s*(.*)", ln, re.I)
        if m:
            return m.group(1) or ln
    return lines[0] if lines else "(no output)"


def statuses(log):
    """{test: status} from what ctest printed: "Failed", "Timeout", "Exception: SegFault"..."""
    got = {}
    if os.path.exists(log):
        with open(log, errors="replace") as f:
            line = r"Test +#\d+: (\S+) \.*\s*(?:\*+)?([A-Za-z][^\n]*?)\s+[\d.]+ sec"
            for m in re.finditer(line, f.read()):
                got[m.group(1)] = m.group(2).strip()
    return got


def fail_reason(status, out):
    lines = [ln.strip() for ln in out.splitlines() if ln.strip()]
    # a test's own verdict, the first; else the last error; else its last line
    fails = [ln for ln in lines if re.search(r"\bFAIL", ln)]
    errors = [ln for ln in lines if re.search(r"\berror\b", ln, re.I)]
    why = fails[0] if fails else (errors or lines or ["(no output)"])[-1]
    return f"{status}: {why}" if status else why


def main():
    results = sys.argv[1]
    stages, failed, skipped, bad = [], [], [], 0
    with open(os.path.join(results, "stages")) as f:
        order = [ln.rstrip("\n").split("\t", 1) for ln in f if ln.strip()]
    for name, state in order:
        counts = {"passed": 0, "failed": 0, "skipped": 0}
        for xml in sorted(glob.glob(os.path.join(results, f"{name}.*.xml"))):
            status = statuses(xml[:-len(".xml")] + ".log")
            for case in ET.parse(xml).getroot().iter("testcase"):
                test, out = case.get("name"), case.findtext("system-out") or ""
                sk = case.find("skipped")
                if case.get("status") == "notrun" and sk is not None and \
                        sk.get("message", "").startswith("SKIP_RETURN_CODE"):
                    why = skip_reason(out)
                    ok = ALLOWED_SKIP.search(why) is not None
                    skipped.append((name, test, why, ok))
                    counts["skipped"] += 1
                    bad += not ok
                elif case.get("status") in ("fail", "notrun") or case.find("failure") is not None:
                    msg = sk.get("message", "not run") if sk is not None else None
                    failed.append((name, test, msg or fail_reason(status.get(test, ""), out)))
                    counts["failed"] += 1
                elif case.get("status") == "disabled":
                    skipped.append((name, test, "disabled", True))
                    counts["skipped"] += 1
                else:
                    counts["passed"] += 1
        findings = []
        if os.path.exists(os.path.join(results, f"{name}.findings")):
            with open(os.path.join(results, f"{name}.findings")) as f:
                findings = [ln.strip() for ln in f if ln.strip()]
        failed += [(name, "-", f) for f in findings]
        if state != "ran" and not state.startswith("left out"):
            failed.append((name, "-", state))
        stages.append((name, state, counts))

    print("==== test.sh: summary")
    for name, state, c in stages:
        if state == "ran":
            print(f"stage {name}: {sum(c.values())} tests, {c['passed']} passed, {c['failed']} failed, "
                  f"{c['skipped']} skipped")
        else:
            print(f"stage {name}: {state}")
    for stage, test, why in failed:
        print(f"FAILED   {stage}: {test}: {why}")
    # the skips grouped by stage and reason (the same reason, numbers aside): a GPU-less machine
    # skips dozens of GPU cases for one reason
    groups = {}
    for stage, test, why, ok in skipped:
        groups.setdefault((stage, re.sub(r"\d+", "N", why), ok), []).append((test, why))
    for (stage, _, ok), tests in groups.items():
        names = ", ".join(t for t, _ in tests[:3])
        names += f" and {len(tests) - 3} more" if len(tests) > 3 else ""
        note = "" if ok else "  <- a skip a package could fix: FAILS the run (scripts/deps.txt)"
        print(f"SKIPPED  {stage}: {names}: {tests[0][1]}{note}")
    if failed or bad:
        parts = [f"{len(failed)} failed"] if failed else []
        parts += [f"{bad} skipped for a missing package"] if bad else []
        print(f"test.sh: FAIL ({', '.join(parts)})")
        return 1
    print(f"test.sh: PASS ({len(skipped)} skipped, each for a reason no package can fix)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
