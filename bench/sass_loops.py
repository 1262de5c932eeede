"""The loops of one kernel in `cuobjdump -sass` output, largest first, with the instructions each
holds by opcode: a static count, for estimating an instruction-bound kernel without a GPU.

    python3 bench/sass_loops.py FILE.sass NAME_PART [N]

NAME_PART picks the kernel (a piece of its mangled name); N loops are printed (default 4). A loop
is the instructions from a backward branch's target to the branch, so nested loops are counted
again inside the ones that hold them."""
import re
import sys
from collections import Counter


def kernel_body(sass, name_part):
    start = sass.find("Function : ")
    while start >= 0:
        line_end = sass.index("\n", start)
        nxt = sass.find("Function : ", line_end)
        if name_part in sass[start:line_end]:
            return sass[start:nxt if nxt >= 0 else len(sass)]
        start = nxt
    sys.exit(f"no kernel whose name holds {name_part!r}")


def loops(body):
    ins = []
    for line in body.splitlines():
        m = re.match(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?);", line)
        if m:
            ins.append((int(m.group(1), 16), m.group(2).strip()))
    index = {addr: k for k, (addr, _) in enumerate(ins)}
    found = []
    for k, (addr, text) in enumerate(ins):
        m = re.search(r"\bBRA\b.*?(0x[0-9a-f]+)", text)
        if m and int(m.group(1), 16) < addr and int(m.group(1), 16) in index:
            ops = Counter()
            for _, t in ins[index[int(m.group(1), 16)]:k + 1]:
                t = re.sub(r"^@!?U?P\w+\s+", "", t)  # the predicate guard
                ops[t.split()[0].split(".")[0]] += 1
            found.append(ops)
    return sorted(found, key=lambda c: -sum(c.values()))


def main():
    sass = open(sys.argv[1]).read()
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 4
    for ops in loops(kernel_body(sass, sys.argv[2]))[:n]:
        print(sum(ops.values()), " ".join(f"{op} {c}" for op, c in ops.most_common()))


if __name__ == "__main__":
    main()
