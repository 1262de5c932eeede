#!/bin/bash
# The man page and the exit codes: golmpi.1 is built from the option table, renders
# without groff warnings, names every option --help names, and --help, the man page and README.md's
# "Exit codes" table list the same codes; `cmake --install` puts it under share/man/man1, where
# `man golmpi` finds it once env.sh is sourced. About 5 s.
#   test_man.sh GOLMPI BUILD_DIR SRC_DIR CMAKE
set -euo pipefail
golmpi=$1 build=$2 src=$3 cmake=$4
page=$build/golmpi.1
fail() { echo "FAIL: $*"; exit 1; }
[[ -s $page ]] || fail "$page was not built"
warn=$(groff -man -ww -z "$page" 2>&1) || fail "groff: $warn"
[[ -z $warn ]] || fail "groff warns: $warn"
text=$(MANWIDTH=200 man -l "$page" 2>/dev/null | col -b)
for opt in $("$golmpi" --help | grep -o -- '^ *\(-[a-zA-Z], \)\?--[a-z-]*' | grep -o -- '--[a-z-]*'); do
    grep -q -- "$opt" <<<"$text" || fail "the man page does not name $opt"
done
codes() { sort -u | tr "\n" " "; }
help_codes=$("$golmpi" --help | sed -n '/^Exit codes/,$p' | grep -o '^  [0-9]' | tr -d ' ' | codes || true)
man_codes=$(sed -n '/^\.SH EXIT STATUS/,/^\.SH/p' "$page" | grep -A1 '^\.TP' | grep -o '^\.B [0-9]' | tr -d '.B ' | codes || true)
readme_codes=$(sed -n '/^## Exit codes/,/^## /p' "$src/README.md" | grep -o '^| [0-9] ' | tr -d '| ' | codes || true)
echo "exit codes: --help [$help_codes] man [$man_codes] README [$readme_codes]"
# every code golmpi exits with: 0, 1 (MPI_Abort of a library failure) and core/exit_codes.h's GOL_EXIT_*
# but the tests' own skip code
want=$({ printf '0\n1\n'; sed -n 's/^ *GOL_EXIT_[A-Z]* = \([0-9]*\),.*/\1/p' "$src/core/exit_codes.h" |
       grep -vx 77; } | codes)
[[ $help_codes == "$want" ]] || fail "--help lists exit codes [$help_codes], want [$want] (core/exit_codes.h)"
[[ $man_codes == "$help_codes" && $readme_codes == "$help_codes" ]] ||
    fail "the exit codes differ: --help [$help_codes], man [$man_codes], README [$readme_codes]"
prefix=$(mktemp -d /tmp/golmpi-man.XXXXXX)
trap 'rm -rf "$prefix"' EXIT
"$cmake" --install "$build" --prefix "$prefix" >/dev/null
[[ -f $prefix/share/man/man1/golmpi.1 ]] || fail "golmpi.1 is not installed under share/man/man1"
found=$(bash -c "source '$prefix/share/golmpi/env.sh' && man -w golmpi")
[[ $found == "$prefix/share/man/man1/golmpi.1" ]] || fail "after env.sh, man -w golmpi is '$found'"
echo "PASS: golmpi.1 names every option, the exit codes agree, man golmpi finds it once installed"
