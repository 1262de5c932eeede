#!/bin/bash
# The fresh rehearsal's README checks (tests/rehearsal.sh readme, the part of `fresh` that reads
# the README before any root is built) refuse what they must: a README that names no lighter run
# of scripts/test.sh, and one whose quick start ends otherwise; and they pass the README as it is.
# Without them the rehearsal would run a mode the README never promised. No root; under a second.
#   tests/test_rehearsal_readme.sh SRC
set -euo pipefail
src=$(cd "${1:?usage: $0 SRC}" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rehearsal-readme.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
light='`GOLMPI_TEST_QUICK=1 bash scripts/test.sh`'
fail() {
  echo "test_rehearsal_readme: FAIL: $*" >&2
  exit 1
}

bash "$src/tests/rehearsal.sh" readme "$src" || fail "the README as it is was refused"

# expect_refusal NAME MESSAGE: rehearsal.sh readme on $tmp/NAME (a README.md) fails with MESSAGE
expect_refusal() {
  local out rc=0
  out=$(bash "$src/tests/rehearsal.sh" readme "$tmp/$1" 2>&1) || rc=$?
  ((rc != 0)) || fail "$1: a README $2 passed: $out"
  grep -qF "rehearsal: FAIL: $3" <<<"$out" || fail "$1: not refused for what it lacks: $out"
  echo "test_rehearsal_readme: ok: $1: refused ($(grep -m1 'rehearsal: FAIL' <<<"$out"))"
}

mkdir -p "$tmp/no-light"
grep -qF "$light" "$src/README.md" || fail "README.md names no $light"
# the lighter run named as the plain one: the README keeps its sentence, loses the mode
sed "s/\`GOLMPI_TEST_QUICK=1 bash scripts\\/test.sh\`/\`bash scripts\\/test.sh\`/g" \
  "$src/README.md" >"$tmp/no-light/README.md"
! grep -qF "$light" "$tmp/no-light/README.md" || fail "the copy still names $light"
expect_refusal no-light "that names no lighter run" "the README names no lighter run of scripts/test.sh"

mkdir -p "$tmp/no-test"
# the quick start's last line dropped (the one line of the README that starts so)
sed '/^bash scripts\/test.sh/d' "$src/README.md" >"$tmp/no-test/README.md"
! cmp -s "$src/README.md" "$tmp/no-test/README.md" || fail "the copy's quick start is unchanged"
expect_refusal no-test "whose quick start does not end with bash scripts/test.sh" \
  "the README's quick start does not end with bash scripts/test.sh"
echo "test_rehearsal_readme: PASS"
