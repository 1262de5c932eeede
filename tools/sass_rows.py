#!/usr/bin/env python3
"""The registers and row-loop instructions of every multi-generation kernel instance,
deep_kernel<K, Conway, Ragged, U> (U: the row loop's unroll), as a build makes them: the table the model of a pass
(cuda/shape_model.c) reads, cuda/shape_model_table.c, and the check that it matches a build.

  sass_rows.py generate OUT.c SASS PTXAS [SOURCE]
      Writes the table from SASS (the disassembly of a cubin of cuda/life_cuda.cu, by
      `cuobjdump -sass` or `nvdisasm`) and PTXAS (nvcc --resource-usage's report of the same
      compile). SOURCE: words saying which toolkit and flags made them.
  sass_rows.py check TABLE.c [--tsv kernel_resources.tsv] [--cubin CUBIN]
      The test shape_model_table: every deep_kernel instance of the build's register table
      (kernel_resources.tsv) has the same registers in TABLE.c; with a disassembler (cuobjdump or
      nvdisasm on PATH, or $CUOBJDUMP / $NVDISASM) and a cubin, the row loops too. Says plainly
      what it could not compare; exits 77 when it could compare nothing.
  sass_rows.py loops SASS
      Prints each deep instance's innermost loops (instructions), for reading.

The row loop of an instance is the first innermost loop of its function in address order: the
all-live tile (deep_tile<..., AllLive = true>), which the compiler places first. Its count over the
instance's unroll U is the instructions a row-iteration. Of those, the table also counts the ones the integer ALU pipe
runs (ALU_OPS: logic, shifts, adds, compares, selects), the pipe that bounds the rule's loops: the
compiler issues register moves as IMAD.MOV on the FMA pipe beside it, and shuffles, loads and
branches go to other units, so only the ALU's share sets how fast a scheduler full of warps runs."""
import os
import re
import shutil
import subprocess
import sys

# SASS opcodes (before the first '.') that run on an SM sub-partition's integer ALU pipe on sm_80
# and sm_90 (NVIDIA's Nsight Compute "alu" pipe: bit manipulation, logic, integer add and compare,
# selects, moves); IMAD and IMUL run on the FMA pipe, SHFL, LDG/STG and BRA elsewhere
ALU_OPS = {"LOP3", "LOP", "PLOP3", "SHF", "SHL", "SHR", "IADD3", "IADD", "ISETP", "SEL", "PRMT",
           "LEA", "POPC", "FLO", "BREV", "BMSK", "SGXT", "IMNMX", "IABS", "MOV", "P2R", "R2P"}
# deep_kernel<K, Conway, Ragged, U>'s mangled name
NAME = re.compile(r"deep_kernelILi(\d+)ELb([01])ELb([01])ELi(\d+)E")


def functions(sass):
    """(mangled name, [instruction text]) per function, cuobjdump's or nvdisasm's layout."""
    out = []
    if "Function : " in sass:  # cuobjdump -sass
        parts = re.split(r"\n\s*Function : (\S+)", sass)
        names, bodies = parts[1::2], parts[2::2]
    else:  # nvdisasm
        parts = re.split(r"\n\s*\.text\.(\S+):", sass)
        names, bodies = parts[1::2], parts[2::2]
    for name, body in zip(names, bodies):
        ins, labels = [], {}
        for line in body.splitlines():
            m = re.match(r"^\s*(\.L_x_\d+):", line)
            if m:
                labels[m.group(1)] = len(ins)
                continue
            m = re.match(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?);", line)
            if m:
                ins.append((int(m.group(1), 16), m.group(2).strip()))
        out.append((name, ins, labels))
    return out


def inner_loops(ins, labels):
    addr_index = {a: k for k, (a, _) in enumerate(ins)}
    loops = []
    for k, (_, text) in enumerate(ins):
        if not re.search(r"\bBRA\b", text):
            continue
        m = re.search(r"(\.L_x_\d+)", text)
        start = labels.get(m.group(1)) if m else None
        if start is None:
            m = re.search(r"\b(0x[0-9a-f]+)\b", text)
            start = addr_index.get(int(m.group(1), 16)) if m else None
        if start is not None and start <= k:
            loops.append((start, k))
    inner = [l for l in loops if not any(o != l and o[0] >= l[0] and o[1] <= l[1] for o in loops)]
    return sorted(inner)


def opcode(text):
    """The opcode of one instruction, its predicate and modifiers left out: ISETP of
    '@!P0 ISETP.GE.AND P1, ...'."""
    return re.sub(r"^@!?U?P\w+\s+", "", text).split()[0].split(".")[0]


def instances_from_sass(sass):
    """{(K, Conway, Ragged, U): [(instructions, ALU instructions) of each innermost loop]}"""
    rows = {}
    for name, ins, labels in functions(sass):
        m = NAME.search(name)
        if not m:
            continue
        loops = [(e - s + 1, sum(opcode(t) in ALU_OPS for _, t in ins[s:e + 1]))
                 for s, e in inner_loops(ins, labels) if e - s + 1 > 1]
        if loops:
            rows[tuple(int(x) for x in m.groups())] = loops
    return rows


def regs_from_ptxas(text):
    regs, cur = {}, None
    for line in text.splitlines():
        m = re.search(r"Compiling entry function '(\S+)' for 'sm_(\d+)'", line)
        if m:
            n = NAME.search(m.group(1))
            cur = (int(m.group(2)),) + tuple(int(x) for x in n.groups()) if n else None
        m = re.search(r"Used (\d+) registers", line)
        if m and cur:
            regs[cur] = int(m.group(1))
            cur = None
    return regs


def generate(out, sass_path, ptxas_path, source="unstated"):
    sass = open(sass_path).read()
    regs = regs_from_ptxas(open(ptxas_path).read())
    loops = instances_from_sass(sass)
    lines = []
    for (cc, k, c, r, u), reg in sorted(regs.items()):
        if (k, c, r, u) not in loops:
            sys.exit(f"no row loop found for deep_kernel<{k},{c},{r},{u}> in {sass_path}")
        insts, alu = loops[(k, c, r, u)][0]
        lines.append(f"    {{{cc}, {k}, {c}, {r}, {u}, {reg}, {insts}, {alu}}},")
    if not lines:
        sys.exit("no deep_kernel instance in the ptxas report")
    with open(out + ".tmp", "w") as f:
        f.write("/* Generated by tools/sass_rows.py generate: do not edit. The registers (ptxas) and\n"
                " * row-loop instructions (SASS) of every deep_kernel<K, Conway, Ragged, U>:\n"
                " * {cc, K, Conway, Ragged, U (rows a loop iteration), registers, row-loop\n"
                " * instructions, those of them on the integer ALU pipe}. The test\n"
                " * shape_model_table compares it with the build. */\n"
                '#include "cuda/shape_model.h"\n\n'
                f'const char shape_model_table_source[] = "{source}";\n\n'
                "const shape_model_instance shape_model_instances[] = {\n"
                + "\n".join(lines) + "\n};\n\n"
                "const int shape_model_instance_count =\n"
                "    (int)(sizeof shape_model_instances / sizeof shape_model_instances[0]);\n")
    os.replace(out + ".tmp", out)
    print(f"{out}: {len(lines)} instances")
    return 0


def read_table(path):
    rows = {}
    for m in re.finditer(r"\{(\d+), (\d+), ([01]), ([01]), (\d+), (\d+), (\d+), (\d+)\}",
                         open(path).read()):
        v = [int(x) for x in m.groups()]
        rows[tuple(v[:5])] = v[5:]
    return rows


def disassembler():
    for env, tool, args in (("CUOBJDUMP", "cuobjdump", ["-sass"]), ("NVDISASM", "nvdisasm", [])):
        exe = os.environ.get(env) or shutil.which(tool)
        if exe and os.access(exe, os.X_OK):
            return [exe] + args
    return None


def check(path, tsv=None, cubin=None):
    table = read_table(path)
    if not table:
        print(f"FAIL: {path} holds no instance")
        return 1
    compared, bad = 0, 0
    if tsv and os.path.exists(tsv):
        build = {}
        for line in open(tsv).read().splitlines()[1:]:
            arch, kernel, regs = line.split("\t")[:3]
            m = re.match(r"deep_kernel<(\d+), (true|false), (true|false), (\d+)>", kernel)
            if m:
                build[(int(arch[3:]), int(m.group(1)), int(m.group(2) == "true"),
                       int(m.group(3) == "true"), int(m.group(4)))] = int(regs)
        for key, regs in sorted(build.items()):
            if key[0] not in {k[0] for k in table}:
                continue  # an architecture the table does not cover: the model uses its nearest
            compared += 1
            if key not in table:
                print(f"FAIL: deep_kernel{list(key[1:])} sm_{key[0]}: built, not in {path}")
                bad += 1
            elif table[key][0] != regs:
                print(f"FAIL: deep_kernel{list(key[1:])} sm_{key[0]}: {regs} registers built, "
                      f"{table[key][0]} in the table")
                bad += 1
        print(f"registers: {compared} instances of the build compared with {path}")
    else:
        print("registers: no kernel_resources.tsv (not a CUDA build with Python): not compared")
    dis = disassembler()
    if not dis:
        print("row loops: no disassembler here (cuobjdump or nvdisasm; $CUOBJDUMP, $NVDISASM): "
              "the instruction counts were NOT compared with the build")
    elif not cubin or not os.path.exists(cubin):
        print("row loops: no cubin given: the instruction counts were NOT compared")
    else:
        for cc in sorted({k[0] for k in table}):
            arch = ["-arch", f"sm_{cc}"] if "cuobjdump" in os.path.basename(dis[0]) else []
            p = subprocess.run(dis + arch + [cubin], capture_output=True, text=True)
            loops = instances_from_sass(p.stdout) if p.returncode == 0 else {}
            if not loops:
                print(f"row loops: {dis[0]} read no sm_{cc} deep_kernel from {cubin}: "
                      "the instruction counts were NOT compared")
                continue
            for (k, c, r, s), ls in sorted(loops.items()):
                key = (cc, k, c, r, s)
                compared += 1
                if key not in table or tuple(table[key][1:3]) != ls[0]:
                    print(f"FAIL: deep_kernel<{k},{c},{r},{s}> sm_{cc}: row loop (instructions, "
                          f"ALU) {ls[0]} built, {tuple(table.get(key, [None] * 3)[1:3])} in the table")
                    bad += 1
            print(f"row loops: {len(loops)} sm_{cc} instances of {cubin} compared")
    if bad:
        print(f"{bad} differences: regenerate with tools/sass_rows.py generate (docs/PERFORMANCE.md)")
        return 1
    return 0 if compared else 77


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "generate":
        return generate(*args)
    if cmd == "loops":
        for key, ls in sorted(instances_from_sass(open(args[0]).read()).items()):
            print(key, ls)
        return 0
    if cmd == "check":
        opts = {"--tsv": None, "--cubin": None}
        path = args[0]
        for i in range(1, len(args) - 1, 2):
            opts[args[i]] = args[i + 1]
        return check(path, opts["--tsv"], opts["--cubin"])
    sys.exit(f"sass_rows.py: unknown command {cmd}")


if __name__ == "__main__":
    sys.exit(main())
