#!/bin/bash
# ctest: build one libFuzzer target with clang (the project itself may be built by gcc) and run it
# for a bounded time. Exit 77 (skipped) when clang or its libFuzzer runtime is missing. A crash, a
# sanitizer report, a leak, an input slower than 10 s or one that needs more than 2 GiB fails the
# test, and the input stays under <work>/<name>/artifacts/; the next run replays the kept inputs
# first, and moves them into the corpus once they pass.
#
# usage: fuzz_run.sh --env FILE --name NAME --seconds N --src FILE... [--seed FILE|DIR...]
#                    [--seed-text TEXT...] [--dict-text TOKEN...]
#   --env: written by tests/fuzz.cmake: clang, cflags and libs (arrays), work (a build directory)
#   --src: tests/fuzz_NAME.c and the production sources it needs, compiled together
set -euo pipefail

env_file='' name='' seconds='' srcs=() seeds=() seed_texts=() dict=()
while (($#)); do
  case $1 in
    --env) env_file=$2 ;;
    --name) name=$2 ;;
    --seconds) seconds=$2 ;;
    --src) srcs+=("$2") ;;
    --seed) seeds+=("$2") ;;
    --seed-text) seed_texts+=("$2") ;;
    --dict-text) dict+=("$2") ;;
    *) echo "fuzz_run.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift 2
done
[[ -n $env_file && -n $name && -n $seconds && ${#srcs[@]} -gt 0 ]] || {
  echo "fuzz_run.sh: --env, --name, --seconds and --src are required" >&2; exit 2; }
clang='' cflags=() libs=() work=''
# shellcheck source=/dev/null
source "$env_file"

if [[ -z $clang || ! -x $clang ]]; then
  echo "skipped: no clang found when CMake ran (apt-get install clang, or scripts/deps.sh --test;"
  echo "then configure again)"
  exit 77
fi
dir=$work/$name
mkdir -p "$dir/corpus" "$dir/artifacts"
"$clang" --version | sed -n 1p

# libFuzzer comes with the compiler runtime, which some installs of clang lack: a probe tells
# that apart from a compile error in golmpi's code, which must fail.
printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void)d; (void)n; return 0; }\n' \
  >"$dir/probe.c"
if ! "$clang" -fsanitize=fuzzer,address,undefined "$dir/probe.c" -o "$dir/probe" \
  >"$dir/probe.log" 2>&1; then
  cat "$dir/probe.log"
  echo "skipped: $clang cannot link -fsanitize=fuzzer,address,undefined (no libFuzzer runtime)"
  exit 77
fi

bin=$dir/fuzz_$name
# -fno-sanitize-recover: UBSan stops at its first report, so libFuzzer keeps the input
"$clang" -g -O1 -Wall -Wextra -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
  "${cflags[@]}" "${srcs[@]}" -o "$bin" "${libs[@]}"

for s in "${seeds[@]}"; do
  if [[ -d $s ]]; then cp -f "$s"/* "$dir/corpus/"; else cp -f "$s" "$dir/corpus/"; fi
done
i=0
for t in "${seed_texts[@]}"; do
  printf '%b' "$t" >"$dir/corpus/seed_text_$i"
  i=$((i + 1))
done
: >"$dir/dict"
for t in "${dict[@]}"; do
  printf '"%s"\n' "$t" >>"$dir/dict"
done

# Reports go to stderr here, whatever the calling environment says (the sanitizer pass of
# scripts/test.sh sends them to files).
export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1
say_failed() {
  echo "FAILED: fuzz_$name found an input that fails; kept in $dir/artifacts/:"
  ls -l "$dir/artifacts/"
  echo "reproduce with: $bin $dir/artifacts/<file>"
  exit 1
}

kept=("$dir"/artifacts/*)
if [[ -e ${kept[0]} ]]; then
  echo "replaying ${#kept[@]} kept input(s) from $dir/artifacts"
  "$bin" -timeout=10 -rss_limit_mb=2048 -error_exitcode=1 -timeout_exitcode=1 "${kept[@]}" \
    >"$dir/replay.log" 2>&1 || { tail -n 60 "$dir/replay.log"; say_failed; }
  mv -f "${kept[@]}" "$dir/corpus/"
fi

dict_flag=()
[[ -s $dir/dict ]] && dict_flag=(-dict="$dir/dict")
echo "fuzzing $name for $seconds s: corpus $dir/corpus, failing inputs kept in $dir/artifacts"
rc=0
"$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
  -error_exitcode=1 -timeout_exitcode=1 -artifact_prefix="$dir/artifacts/" "${dict_flag[@]}" \
  "$dir/corpus" >"$dir/fuzz.log" 2>&1 || rc=$?
if ((rc != 0)); then
  tail -n 80 "$dir/fuzz.log"
  say_failed
fi
grep -E '^(Done|stat::number_of_executed_units|stat::peak_rss_mb)' "$dir/fuzz.log" || true
echo "corpus: $(find "$dir/corpus" -type f | wc -l) inputs"
