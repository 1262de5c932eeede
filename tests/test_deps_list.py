#!/usr/bin/env python3
"""scripts/deps.txt against what the scripts and tests run.

  test_deps_list.py sources SRC     every command and Python module that the tests' sources
                                    (tests/, and the scripts/, jobs/ and tools they run) call is
                                    in scripts/deps.txt, and every command there is still called
  test_deps_list.py installed SRC   every command and module of scripts/deps.txt is here (what
                                    `scripts/deps.sh --test` installs): exit 1 naming the package
  test_deps_list.py list SRC        the commands and modules found in the sources, and where
  test_deps_list.py finds-mutant SRC   the finds' check (part of `sources`) fails on a copy of
                                    the test tree with an unlisted find_package and a REQUIRED
                                    find_package of a `test` package put in

The commands are read from the sources, not run: in shell, the first word of each simple command
(after the wrappers sudo, env, timeout, exec, nohup, time), outside quotes (a `bash -c '...'` and a
"$(...)" are code); in Python, the first word of a literal argument list (`run(["mount", ...])`)
and `shutil.which("x")`; in CMake, the first word after COMMAND and the bracketed shell scripts.
Python modules are those imported that are neither the standard library's nor the tests' own.

`sources` also checks the test tree's CMake (tests/*.cmake, tests/**/CMakeLists.txt): every
find_package(NAME) and find_program(NAME ...) is a word cmake:NAME of scripts/deps.txt (a
find_program may instead look for a command listed there), and REQUIRED only where that line is a
`run` package: a missing `test` package must never stop the configure of golmpi, which a new
user's scripts/run.sh does with the tests on before scripts/test.sh installs them.
"""
import os
import re
import shutil
import subprocess
import sys

# Shell words that are no program: keywords and builtins
SHELL_WORDS = set("""
if then else elif fi for in do done while until case esac function select time coproc
alias bg bind break builtin caller cd command compgen complete continue declare dirs disown echo
enable eval exec exit export false fc fg getopts hash help history jobs kill let local logout
mapfile popd printf pushd pwd read readarray readonly return set shift shopt source suspend test
times trap true type typeset ulimit umask unalias unset wait
""".split())
# Wrappers: the command they run is the word after their options
WRAPPERS = {"sudo", "exec", "nohup", "time", "command", "env", "timeout", "nice", "setsid"}
# the end of a line that continues on the next (a backslash, a quoted literal's line break)
CONTINUED = " \x01\n"
COMMAND_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_.+-]*")


def read_list(src):
    """scripts/deps.txt: {word: (package, when)}"""
    words = {}
    with open(os.path.join(src, "scripts", "deps.txt")) as f:
        for line in f:
            fields = line.split("#", 1)[0].split()
            if fields:
                for w in fields[2:]:
                    words[w] = (fields[0], fields[1])
    return words


# Shell ---------------------------------------------------------------------------------------

def closing(text, k, open_="(", close=")"):
    """the index just past the bracket that closes the one before k, quotes skipped"""
    depth, n = 1, len(text)
    while k < n and depth:
        c = text[k]
        if c in "'\"":
            q = k + 1
            while q < n and text[q] != c:
                q += 2 if c == '"' and text[q] == "\\" else 1
            k = q
        elif c == "\\":
            k += 1
        elif c == open_:
            depth += 1
        elif c == close:
            depth -= 1
        k += 1
    return min(k, n)


def shell_code(text, line, subs):
    """The text with comments, heredoc bodies and quoted literals blanked, one "_" for each
    substitution ($(...), <(...), `...`, a `sh -c '...'`), whose code goes to subs as
    (first line, code) with its own substitutions after it"""
    out, i, n = [], 0, len(text)
    heredocs = []

    def blank(j, k):
        # the lines a literal spans stay lines (for the line numbers), marked as one
        return "_" + CONTINUED * text.count("\n", j, k)

    def sub(j, k):
        first = line + text.count("\n", 0, j)
        subs.append((first, shell_code(text[j:k], first, subs)))

    while i < n:
        c = text[i]
        if c == "\n" and heredocs:
            # skip each pending heredoc's body, up to its delimiter line
            start = i
            for delim in heredocs:
                end = re.compile(r"\n\t*" + re.escape(delim) + r"[ \t]*(?=\n|$)").search(text, i)
                i = end.end() if end else n
            heredocs = []
            out.append("\n" * (text.count("\n", start, i) or 1))
            continue
        if text.startswith("((", i) or text.startswith("$((", i):
            # arithmetic: no command in it
            k = closing(text, text.index("((", i) + 2)
            k = closing(text, k) if k < n and text[k - 1] == ")" and text[k:k + 1] == ")" else k
            out.append(" " + blank(i, k) + " ")
            i = k
            continue
        if text.startswith(("$(", "<(", ">("), i):
            k = closing(text, i + 2)
            sub(i + 2, k - 1)
            out.append(" " + blank(i, k) + " ")
            i = k
            continue
        if text.startswith("${", i):
            k = closing(text, i + 2, "{", "}")
            out.append(blank(i, k))
            i = k
            continue
        if c == "`":
            k = text.find("`", i + 1)
            k = n if k < 0 else k
            sub(i + 1, k)
            out.append(blank(i, k))
            i = k + 1
            continue
        if c == "(" and i > 0 and text[i - 1] == "=":
            # an array's words
            k = closing(text, i + 1)
            out.append(blank(i, k))
            i = k
            continue
        if c == "#" and (i == 0 or text[i - 1] in " \t\n;(|&"):
            while i < n and text[i] != "\n":
                i += 1
            continue
        if c == "\\" and i + 1 < n:
            out.append(CONTINUED if text[i + 1] == "\n" else "_")
            i += 2
            continue
        if text.startswith("<<", i) and not text.startswith("<<<", i):
            m = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1").match(text, i)
            if m:
                heredocs.append(m.group(2))
                out.append(" _ ")
                i = m.end()
                continue
        if c == "'":
            k = text.find("'", i + 1)
            k = n if k < 0 else k
            if re.search(r"\b(ba)?sh\b[^;|&\n]*\s-c\s*$", "".join(out[-200:])):
                sub(i + 1, k)
            out.append(blank(i, k))
            i = k + 1
            continue
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                if text[j] == "\\":
                    j += 2
                    continue
                if text.startswith("$((", j):
                    j = closing(text, closing(text, j + 3))
                    continue
                if text.startswith("$(", j):
                    k = closing(text, j + 2)
                    sub(j + 2, k - 1)
                    j = k
                    continue
                if text[j] == "`":
                    k = text.find("`", j + 1)
                    k = n if k < 0 else k
                    sub(j + 1, k)
                    j = k
                j += 1
            out.append(blank(i, j))
            i = j + 1
            continue
        out.append(c)
        i += 1
    return "".join(out)


def simple_commands(code, line, defined):
    """(word, line) for the first word of each simple command of code"""
    found = []
    in_case = 0
    lines, first = [], None
    for lineno, text in enumerate(code.split("\n"), line):
        first = lineno if first is None else first
        lines.append(text)
        if text.endswith(CONTINUED[:-1]):
            continue
        text, lineno, lines, first = " ".join(lines), first, [], None
        # a case's patterns are no commands
        in_case += len(re.findall(r"\bcase\b.*\bin\b", text)) - len(re.findall(r"\besac\b", text))
        if in_case > 0 or re.search(r"\bcase\b", text):
            text = re.sub(r"^\s*\(?[^()$]*\)|\bin\s+\(?[^()$;]*\)", " ", text)
        for part in re.split(r"\|\||&&|[|;&(){}]|\bthen\b|\bdo\b|\belse\b", text):
            words = part.split()
            while words:
                w = words[0]
                keyword = w in ("!", "if", "elif", "while", "until", "time")
                if keyword or re.match(r"\w+(\[.*\])?\+?=", w):
                    words = words[1:]
                    continue
                if re.match(r"\d*[<>]", w):
                    words = words[2:] if re.fullmatch(r"\d*[<>]+&?", w) else words[1:]
                    continue
                if w in WRAPPERS:
                    if w == "command" and len(words) > 1 and words[1].startswith("-"):
                        words = []
                        break
                    words = words[1:]
                    duration = re.compile(r"[\d.]+[smh]?")
                    while words and (words[0].startswith("-") or "=" in words[0]
                                     or (w == "timeout" and duration.fullmatch(words[0]))):
                        words = words[2:] if w == "env" and words[0] == "-u" else words[1:]
                    continue
                break
            if not words:
                continue
            w = words[0]
            if re.match(r"/(usr/)?s?bin/[^/$]+$", w):
                w = os.path.basename(w)
            if w in ("for", "case", "in", "esac", "done", "fi", "select"):
                continue
            if COMMAND_WORD.fullmatch(w) and w not in SHELL_WORDS and w not in defined:
                found.append((w, lineno))
    # `for c in a b c; do command -v "$c"`: the programs a script looks for
    for m in re.finditer(r"for (\w+) in ([\w .+-]+); do[^\n]*command -v \"?\$\{?\1\b", code):
        found += [(w, line + code.count("\n", 0, m.start())) for w in m.group(2).split()]
    return found


def shell_functions(text):
    """the names of the functions a shell script defines"""
    return set(re.findall(r"(?m)^\s*(?:function\s+)?([A-Za-z_][A-Za-z0-9_-]*)\s*\(\)", text))


def sourced_files(text):
    """the names (".../uncut.sh": uncut.sh) of the files a shell script sources, whatever
    expression gives their directory ("$dir/cluster/uncut.sh", "${GOLMPI_SHARE:-...}/jobs/x.sh")"""
    return re.findall(r"(?m)^\s*(?:source|\.)\s+[^\n]*?/([\w.-]+\.sh)\b", text)


def shell_commands(text, line=1, outside=()):
    """(word, line) for the first word of each simple command in a shell script; outside: the
    functions it has from the files it sources, or from the scripts that source it"""
    subs = []
    code = shell_code(text, line, subs)
    defined = shell_functions("\n".join([code] + [sub for _, sub in subs])) | set(outside)
    found = simple_commands(code, line, defined)
    for first, sub in subs:
        found += simple_commands(sub, first, defined)
    return found


# Python, CMake --------------------------------------------------------------------------------

def python_commands(text):
    found = []
    call = r"(?:\w\(\s*\[\s*|shutil\.which\(\s*)[\"']([A-Za-z][A-Za-z0-9_.+-]*)[\"']"
    for m in re.finditer(call, text):
        found.append((m.group(1), text.count("\n", 0, m.start()) + 1))
    return found


def python_modules(text, own):
    found = []
    stdlib = set(sys.stdlib_module_names)
    imports = (r"(?m)^\s*(?:import\s+([\w., ]+?)(?:\s+as\s+\w+)?|from\s+([\w.]+)\s+import\b.*)"
               r"\s*(?:#.*)?$")
    for m in re.finditer(imports, text):
        names = [m.group(2)] if m.group(2) else [x.split()[0] for x in m.group(1).split(",")]
        for name in names:
            top = name.split(".")[0]
            if top and top not in stdlib and top not in own:
                found.append(("py:" + top, text.count("\n", 0, m.start()) + 1))
    return found


def cmake_commands(text):
    found = []
    text = re.sub(r"(?m)#.*$", "", text)
    for m in re.finditer(r"\bCOMMAND\s+([A-Za-z][A-Za-z0-9_.+-]*)", text):
        found.append((m.group(1), text.count("\n", 0, m.start()) + 1))
    for m in re.finditer(r"\[(=*)\[(.*?)\]\1\]", text, re.S):
        found += shell_commands(m.group(2), text.count("\n", 0, m.start(2)) + 1)
    return found


# The test tree's finds -------------------------------------------------------------------------

FIND = re.compile(r"\b(find_package|find_program)\s*\(([^)]*)\)", re.I)
# the words that end find_program's NAMES list
FIND_KEYWORDS = {"NAMES_PER_DIR", "HINTS", "PATHS", "PATH_SUFFIXES", "DOC", "REQUIRED",
                 "NO_DEFAULT_PATH", "NO_CACHE", "VALIDATOR", "ENV"}


def test_cmake_files(src):
    """tests/*.cmake, tests/CMakeLists.txt and every tests/**/CMakeLists.txt"""
    tests = os.path.join(src, "tests")
    files = sorted(os.path.join("tests", f) for f in os.listdir(tests) if f.endswith(".cmake"))
    for d, _, fs in os.walk(tests):
        if "CMakeLists.txt" in fs:
            files.append(os.path.relpath(os.path.join(d, "CMakeLists.txt"), src))
    return files


def check_finds(src, words):
    """the failures of the test tree's find_package/find_program against scripts/deps.txt"""
    failures, seen = [], set()
    for rel in test_cmake_files(src):
        with open(os.path.join(src, rel)) as f:
            text = re.sub(r"(?m)#.*$", "", f.read())
        for m in FIND.finditer(text):
            where = f"{rel}:{text.count(chr(10), 0, m.start()) + 1}"
            args = m.group(2).split()
            if not args:
                continue
            name, call = args[0], m.group(1).lower()
            seen.add(name)
            entry = words.get("cmake:" + name)
            if entry is None and call == "find_program":
                names = args[args.index("NAMES") + 1:] if "NAMES" in args else args[1:2]
                for n in names:
                    if n in FIND_KEYWORDS:
                        break
                    if n in words and words[n][1] != "base":
                        entry = words[n]
                        break
            if entry is None:
                failures.append(f"FAIL: {call}({name}) ({where}) is in no line of "
                                f"scripts/deps.txt: add cmake:{name} to its package's line")
            elif "REQUIRED" in args and entry[1] != "run":
                failures.append(f"FAIL: {call}({name} ... REQUIRED) ({where}) stops the configure "
                                f"without {entry[0]}, a `{entry[1]}` package: leave the tests that "
                                "need it unregistered instead (golmpi_not_registered)")
    for w, (pkg, _) in sorted(words.items()):
        if w.startswith("cmake:") and w[6:] not in seen:
            failures.append(f"FAIL: scripts/deps.txt lists {w} ({pkg}), which no find_package or "
                            "find_program of the test tree looks for")
    return failures


def finds_mutant(src):
    """check_finds on a copy of the test tree's CMake with two faults put in: each must fail"""
    import tempfile
    words = read_list(src)
    with tempfile.TemporaryDirectory() as tmp:
        for rel in test_cmake_files(src):
            os.makedirs(os.path.join(tmp, os.path.dirname(rel)), exist_ok=True)
            shutil.copy(os.path.join(src, rel), os.path.join(tmp, rel))
        with open(os.path.join(tmp, "tests", "halo.cmake"), "a") as f:
            f.write("find_package(Python3 COMPONENTS Interpreter REQUIRED)\n"
                    "find_package(GolmpiNoSuchPackage)\n")
        if check_finds(src, words):
            print("FAIL: the tree's own finds fail the check (run `sources`)")
            return 1
        failures = check_finds(tmp, words)
    print("\n".join(failures))
    want = ["find_package(Python3 ... REQUIRED) (tests/halo.cmake", "find_package(GolmpiNoSuchPackage)"]
    lost = [w for w in want if not any(w in f for f in failures)]
    for w in lost:
        print(f"FAIL: the check did not report {w}")
    if lost:
        return 1
    print("PASS: an unlisted find_package and a REQUIRED test package each fail the check")
    return 0


# The sources -----------------------------------------------------------------------------------

def sources(src):
    """the files whose commands the tests run: tests/, scripts/, jobs/, tools/golmpi-view and the
    plotting tools the tests call"""
    top = ("tests", "scripts", "jobs")
    files = [os.path.relpath(os.path.join(d, f), src) for t in top
             for d, _, fs in os.walk(os.path.join(src, t)) for f in fs if "__pycache__" not in d]
    files += ["tools/golmpi-view", "cmake/golmpi-env.sh"]
    files += ["bench/" + f for f in os.listdir(os.path.join(src, "bench")) if f.startswith("plot_")]
    for rel in files:
        path = os.path.join(src, rel)
        # this file names commands as examples
        if rel.startswith(("tests/data/", "tests/patterns/")) or rel == "tests/test_deps_list.py" \
                or not os.path.isfile(path):
            continue
        with open(path, errors="replace") as f:
            text = f.read()
        first = text.split("\n", 1)[0]
        if rel.endswith((".sh", ".sbatch")) or re.match(r"#!.*\b(ba)?sh\b", first):
            kind = "sh"
        elif rel.endswith(".py") or "python" in first:
            kind = "py"
        elif rel.endswith((".cmake", "CMakeLists.txt")):
            kind = "cmake"
        else:
            continue
        yield rel, kind, text


def found_in(src):
    """{word: [file:line, ...]} of every command and module the sources call"""
    own = {os.path.splitext(f)[0] for d in ("tests", "tests/cluster", "tests/slurm", "bench")
           for f in os.listdir(os.path.join(src, d)) if f.endswith(".py")}
    # programs the project builds or ships: no package brings them
    ours = {"golmpi", "golmpi-render", "golmpi-view", "golmpi-man", "golmpi-bounds", "golmpi-model"}
    hits = {}
    files = list(sources(src))
    # a sourced file's functions are its sourcers', and the sourcers' are the sourced file's
    shared = {}
    for rel, kind, text in files:
        if kind != "sh":
            continue
        for tail in sourced_files(text):
            for other, other_kind, other_text in files:
                if other_kind == "sh" and other.endswith("/" + tail):
                    shared.setdefault(rel, set()).update(shell_functions(other_text))
                    shared.setdefault(other, set()).update(shell_functions(text))
    for rel, kind, text in files:
        if kind == "sh":
            got = shell_commands(text, outside=shared.get(rel, ()))
        elif kind == "py":
            got = python_commands(text) + python_modules(text, own)
        else:
            got = cmake_commands(text)
        for word, line in got:
            if word not in ours and not word.startswith(("test_", "golmpi_")):
                hits.setdefault(word, []).append(f"{rel}:{line}")
    return hits


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("sources", "installed", "list", "finds-mutant"):
        sys.exit(__doc__)
    mode, src = sys.argv[1], sys.argv[2]
    if mode == "finds-mutant":
        return finds_mutant(src)
    words = read_list(src)
    if mode == "list":
        for word, where in sorted(found_in(src).items()):
            print(f"{word:24} {words.get(word, ('-',))[0]:22} {' '.join(where[:4])}")
        return 0
    if mode == "sources":
        hits = found_in(src)
        texts = "\n".join(text for _, _, text in sources(src))
        unlisted = sorted(set(hits) - set(words))
        # a word found only through a variable ("$clang", "$pip") is still named in the sources
        def named(w):
            return re.search(r"(?<![\w.-])" + re.escape(w.removeprefix("py:")) + r"(?![\w-])", texts)
        # a cmake: word is checked against the finds below
        unnamed = sorted(w for w in words if not w.startswith("cmake:") and not named(w))
        finds = check_finds(src, words)
        for word in unlisted:
            where = ", ".join(hits[word][:3])
            print(f"FAIL: {word} is called ({where}) but not in scripts/deps.txt")
        for word in unnamed:
            print(f"FAIL: scripts/deps.txt lists {word} ({words[word][0]}), which no source names")
        for f in finds:
            print(f)
        if unlisted or unnamed or finds:
            return 1
        print(f"PASS: the {len(hits)} commands and modules the sources call are in "
              "scripts/deps.txt, and the test tree's finds in its lines")
        return 0
    # installed: Debian keeps some programs in sbin, which a user's PATH may lack; apt's Python
    # modules are those of /usr/bin/python3, which a pyenv or venv python3 on PATH may hide
    path = os.environ.get("PATH", "") + ":/usr/sbin:/sbin"
    python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
    missing, n = {}, 0
    for word, (pkg, when) in sorted(words.items()):
        # a cmake: word is found by the configure, which says so when it is not
        if when == "gpu" or word.startswith("cmake:"):
            continue
        n += 1
        if word.startswith("py:"):
            r = subprocess.run([python, "-c", f"import {word[3:]}"], capture_output=True)
            ok = r.returncode == 0
        else:
            ok = shutil.which(word, path=path) is not None
        if not ok:
            missing.setdefault((pkg, when), []).append(word)
    for (pkg, when), ws in sorted(missing.items()):
        how = {"base": "every Debian root has it", "run": "scripts/deps.sh installs it",
               "test": "scripts/deps.sh --test installs it"}[when]
        print(f"FAIL: {' '.join(ws)} not found (package {pkg}: {how})")
    if missing:
        return 1
    print(f"PASS: the {n} commands and modules of scripts/deps.txt are all here")
    return 0


if __name__ == "__main__":
    sys.exit(main())
