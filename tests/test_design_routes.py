#!/usr/bin/env python3
"""docs/DESIGN.md's routes against the code.

  test_design_routes.py SRC            exit 1 naming each name of the routes that the code lacks
  test_design_routes.py --mutant SRC   the same check on a copy of DESIGN.md with one name of a
                                       route renamed and one call of a chain reordered: passes
                                       when the check fails on each

The routes are the sections "Path of a run", "One exchange, from main to ncclSend" and "One
frame, from the kernel to the file": a reader follows them into the code, so a name there that the code renamed, or a
call the code makes elsewhere, sends the reader astray. Checked:
  - every file:function (also `file`:`function`, and one broken across a line) is a function
    defined in that file;
  - every function (file) and `function` (file) is a function defined in that file;
  - in the route blocks, each snake_case name in the left column under a file:function header is
    a function that the header's function calls (a deeper indent: called by the line above);
  - every chain `a` → `b` of the text, a -> b of the blocks (snake_case names): a calls b;
  - every other snake_case name of the route blocks, and every `snake_case` name of the text, is
    a function, macro, type or field named somewhere in the C sources.
"""
import os
import re
import sys
import tempfile

SECTIONS = ("## Path of a run", "## One exchange, from main to ncclSend",
            "## One frame, from the kernel to the file")
CODE_DIRS = ("src", "core", "backend", "cpu", "cuda", "halo", "io")
SNAKE = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b")
PATH = r"(?:src|core|backend|cpu|cuda|halo|io)/[\w/]+\.(?:c|cu|h)"


def routes(design):
    """the text of the route sections, each up to the next heading"""
    out = []
    for title in SECTIONS:
        start = design.find(title + "\n")
        if start < 0:
            raise SystemExit(f"FAIL: docs/DESIGN.md has no section '{title}'")
        end = design.find("\n## ", start + len(title))
        out.append(design[start:end if end > 0 else len(design)])
    return "\n".join(out)


class Code:
    """the C sources: their text, and each function's body found on demand"""

    def __init__(self, src):
        self.src = src
        self.text = {}
        for d in CODE_DIRS:
            for dirpath, _, files in os.walk(os.path.join(src, d)):
                for f in files:
                    if f.endswith((".c", ".cu", ".h")):
                        rel = os.path.relpath(os.path.join(dirpath, f), src)
                        with open(os.path.join(src, rel), errors="replace") as fh:
                            self.text[rel] = fh.read()
        self.everything = "\n".join(self.text.values())

    def body(self, name, path=None):
        """the body of function name, defined in path (or anywhere), or None"""
        definition = re.compile(r"(?m)^[A-Za-z_][^;\n()]*?\b" + re.escape(name)
                                + r"\s*\([^;{}]*\)\s*\{")
        for rel in [path] if path else self.text:
            text = self.text.get(rel, "")
            m = definition.search(text)
            if not m:
                continue
            depth, k = 1, m.end()
            while k < len(text) and depth:
                depth += {"{": 1, "}": -1}.get(text[k], 0)
                k += 1
            return text[m.end():k]
        return None

    def calls(self, caller, callee):
        """caller's body names callee (a call, or a function pointer it passes on)"""
        body = self.body(caller)
        return body is not None and re.search(r"\b" + re.escape(callee) + r"\b", body)

    def named(self, name):
        return re.search(r"\b" + re.escape(name) + r"\b", self.everything)


def check(src, design):
    code = Code(src)
    text = routes(design)
    failures = []
    # a file:function broken after its colon onto the next line is one name
    joined = re.sub(r"(" + PATH + r"):`?\s*\n\s*", r"\1:", text)

    def defined(said, path, name):
        if path not in code.text:
            failures.append(f"{said}: no file {path}")
        elif code.body(name, path) is None:
            failures.append(f"{said}: {path} defines no function {name}")

    for m in re.finditer(r"(" + PATH + r"):`?(\w+)`?", joined):
        path, name = m.groups()
        defined(f"{path}:{name}", path, name)
    for m in re.finditer(r"`?\b([a-z]\w*_\w+)`?\s+\((" + PATH + r")", text):
        name, path = m.groups()
        defined(f"{name} ({path})", path, name)
    # "`a` → `b`" in the text, "a -> b" or "a -> file:b" in the blocks (not "b->ops->advance")
    chain = r"`?\b([a-z]\w*_\w+)`?\s+(?:→|->)\s+(?=`?(?:" + PATH + r":)?`?([a-z]\w*_\w+)\b)"
    for m in re.finditer(chain, joined):
        a, b = m.groups()
        if not code.calls(a, b):
            failures.append(f"`{a}` -> `{b}`: {a} does not call {b}")
    for name in sorted(set(re.findall(r"`([a-z]\w*_\w+)`", text))):
        if not code.named(name):
            failures.append(f"`{name}`: named nowhere in the C sources")
    # the route blocks: indented lines; a header "path:function  what it does" at 4 spaces
    callers = {}
    for line in text.split("\n"):
        if not line.startswith("    ") or not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        left, _, right = line.strip().partition("  ")
        header = re.match(r"(" + PATH + r"):(\w+)$", left)
        if indent == 4 and header:
            callers = {4: header.group(2)}
            continue
        if indent == 4 and not header:
            continue
        for name in SNAKE.findall(right) + SNAKE.findall(left):
            if not code.named(name):
                failures.append(f"{name} (a route block): named nowhere in the C sources")
        caller = callers.get(indent - 4)
        # the left column, pseudo-code aside: "f == 0: output_wait_slot", "hand_over (the ...)"
        names = [n for n in SNAKE.findall(re.sub(r"\([^)]*\)", "", left))
                 if code.body(n) is not None]
        if caller:
            for name in names:
                if not code.calls(caller, name):
                    failures.append(f"{name} under {caller} (a route block): {caller} does not "
                                    f"call {name}")
        if names:
            callers[indent] = names[-1]
    return failures


def main():
    args = sys.argv[1:]
    mutant = args[:1] == ["--mutant"]
    if mutant:
        args = args[1:]
    if len(args) != 1:
        sys.exit(__doc__)
    src = args[0]
    with open(os.path.join(src, "docs", "DESIGN.md")) as f:
        design = f.read()
    if not mutant:
        failures = check(src, design)
        for f in failures:
            print("FAIL: docs/DESIGN.md's routes: " + f)
        if failures:
            return 1
        print("PASS: every name of docs/DESIGN.md's routes is in the code where the routes say")
        return 0
    # each fault alone must fail the check
    faults = [("cuda/backend_cuda.c:enqueue_pass", "cuda/backend_cuda.c:enqueue_the_pass"),
              ("`cpu_advance` → `post_exchange`", "`cpu_advance` → `tile_gens`"),
              ("        run_passes", "        run_the_passes"),
              ("`staged_post` (halo/halo_mpi_staged.c)", "`staged_post` (halo/halo_mpi.c)"),
              ("(`admit_run`)", "(`admit_the_run`)")]
    # the faults must be caught on their own, also while DESIGN.md has slips of its own
    baseline = check(src, design)
    bad = 0
    for old, new in faults:
        if old not in design:
            print(f"FAIL: DESIGN.md no longer has '{old}' to change: update the faults here")
            bad = 1
            continue
        failures = check(src, design.replace(old, new, 1))
        failures = [f for f in failures if f not in baseline]
        print(f"{new!r}: {failures[0] if failures else 'NOT CAUGHT'}")
        bad |= not failures
    if bad:
        return 1
    print(f"PASS: each of the {len(faults)} faults in the routes fails the check")
    return 0


if __name__ == "__main__":
    sys.exit(main())
