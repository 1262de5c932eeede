#!/usr/bin/env python3
"""Writes a copy of a source file with one ordering taken out, for the simulated GPU's mutation
tests (tests/cudasim.cmake): every FIND must occur exactly once and is replaced by its REPLACE, so
a mutation that no longer applies to the code breaks the build instead of testing nothing.
    mutate.py SRC DST FIND REPLACE [FIND REPLACE ...]
FIND and REPLACE take Python's escapes: \\n a newline, \\x3b a semicolon (which CMake would
split a list at)."""
import os
import sys

src, dst, pairs = sys.argv[1], sys.argv[2], sys.argv[3:]
if not pairs or len(pairs) % 2:
    sys.exit("mutate.py: FIND REPLACE pairs expected")
with open(src) as f:
    text = f.read()
for find, replace in zip(pairs[::2], pairs[1::2]):
    find, replace = (x.encode().decode("unicode_escape") for x in (find, replace))
    n = text.count(find)
    if n != 1:
        sys.exit(f"mutate.py: {src}: {find!r} occurs {n} times, expected once: update the mutation")
    text = text.replace(find, replace)
os.makedirs(os.path.dirname(dst) or ".", exist_ok=True)
with open(dst, "w") as f:
    f.write(f"#line 1 \"{src}\"\n" + text)
