# Sourced by the bench scripts that compare golmpi binaries: a binary as given, or a git revision
# built (Release, no CUDA: the CPU code does not depend on it) in a worktree of its own under the
# caller's $work, removed at exit. Needs: repo (the checkout), work (a scratch directory).
#   add_binary BIN|REV   appends the binary's path to bins (not in a subshell, so that the cleanup
#                        sees the worktree)
#   new_and_old NEW [OLD]  bins= NEW's binary, then OLD's if given; names= new, old to match
trees=()
bins=()
revisions_cleanup() {
  for t in "${trees[@]}"; do git -C "$repo" worktree remove --force "$t" || true; done
  rm -rf "$work"
}
trap revisions_cleanup EXIT

add_binary() {
  if [[ -x $1 && -f $1 ]]; then bins+=("$(realpath "$1")"); return; fi
  local rev tree
  rev=$(git -C "$repo" rev-parse --verify "$1^{commit}")
  tree=$work/tree-${rev:0:12}
  git -C "$repo" worktree add --detach "$tree" "$rev" >&2
  trees+=("$tree")
  cmake -S "$tree" -B "$tree/build" -DGOLMPI_ENABLE_CUDA=OFF -DBUILD_TESTING=OFF >/dev/null
  cmake --build "$tree/build" -j2 --target golmpi >/dev/null
  bins+=("$tree/build/golmpi")
}

new_and_old() {
  names=(new)
  add_binary "$1"
  if (($# >= 2)); then
    names+=(old)
    add_binary "$2"
  fi
}
