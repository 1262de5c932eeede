#!/bin/bash
# Two machines rehearsed on minimal Debian 12 roots (mmdebstrap minbase), without a GPU.
#
# The GPU session: a root stands in for the GPU machine (no compiler, no Open MPI, no HDF5, no
# cJSON; python3 with h5py and numpy, cmake and ctest from pip wheels; the CUDA runtime copied from
# the toolkit in NVIDIA's layout; NCCL from PyPI's nvidia-nccl-cu13 wheel). The session's steps,
# with scripts/carry.sh: carry the build tree and the packages, install them in the root, and
# inside it (chroot): ldd of golmpi and golmpi-render with nothing missing; gpu_check.sh --dry-run;
# GPU_CHECK_NO_PROBE=1 gpu_check.sh --parts env with the CUDA runtime and NCCL versions golmpi
# loads; 2-rank CPU runs under the carried mpirun whose frames the root's h5py checks against
# tests/reference.py.
#
# A new user's machine: a bare root (minbase, and sudo as a fresh cloud machine has it), a user
# who is not root with sudo, and a copy of the source tree as that user's. As that user, in one
# shell, the README's fenced blocks as printed, read from under its markers and run unchanged:
# the quick start (scripts/run.sh: its packages, the build with the tests on, the main job
# mpirun -n 4 golmpi --size 16384, 1000 generations, 1.3 GiB; then source env.sh), then
# golmpi, golmpi-render and golmpi-view on PATH and `man golmpi`, then the Gosper gun example
# (examples-gun) from another directory. The quick start's last line, bash scripts/test.sh, runs
# in the lighter mode the README names after the block (GOLMPI_TEST_QUICK=1, exported before the
# block): its packages (scripts/deps.sh --test), its build of build/, the tree run.sh configured,
# with no test left unregistered, and its quick tests, to its verdict "test.sh: PASS"; then every
# package of scripts/deps.txt installed and every command and Python module found
# (tests/test_deps_list.py installed). The packages come from the rehearsal's own cache once a
# run has filled it, with no network; until then from Debian's registry.
#
#   tests/rehearsal.sh run SRC BUILD       the GPU session; exit 0 when every step passed
#   tests/rehearsal.sh missing SRC BUILD   the same with one package left out of the carry (the
#                                          owner of the last library golmpi names that the bare
#                                          root lacks): passes when the rehearsal fails naming it
#   tests/rehearsal.sh carry-offline SRC BUILD   the carry's download with the cache filled, in a
#                                          network namespace with no network: passes when it
#                                          writes the same MANIFEST and files as with the
#                                          network, and the same with an empty cache fails
#   tests/rehearsal.sh fresh SRC           the new user's machine
#   tests/rehearsal.sh fresh-full SRC      the new user's machine, as root, the quick start
#                                          whole, bash scripts/test.sh in full (about 45 min
#                                          on 2 cores; not a ctest case: docs/BUILD.md has
#                                          the recorded run)
#   tests/rehearsal.sh fresh-required SRC  the same on a copy of SRC whose tests/halo.cmake
#                                          REQUIRES Python3: passes when it fails at the quick
#                                          start's configure with CMake's error
#   tests/rehearsal.sh readme SRC          the README checks of fresh alone (no root, no Debian
#                                          root): its blocks, and the lighter run it names
#   tests/rehearsal.sh inside|inside-fresh|inside-fresh-full SRC   (run by the above, in the
#                                          chroot)
#
# Exit 77 (skipped) when not root (chroot and mounts need it). Any failure stops the rehearsal
# with one line, "rehearsal: FAIL: ...", naming it. The roots, the wheels and the Debian packages
# of `fresh` are cached in GOLMPI_REHEARSAL_CACHE (default ~/.cache/golmpi/rehearsal; about
# 2.5 GB: the two roots, the stand-in, the wheels and the packages), keyed by what they hold, the
# packages (debs-KEY) by scripts/deps.txt and the root they go on; `rm -rf ~/.cache/golmpi`
# clears it. `fresh` fills debs-KEY as apt's archive while it installs from the registry, and
# indexes it once the run passed; a `fresh` or `fresh-required` on a filled one runs in a network
# namespace of its own (up only on its loopback), the cache its apt's only source: it reads
# nothing from the network. A run works on an overlay (or a copy) of a cached root in a private
# mount namespace, so its mounts end with it, also when it is killed, and nothing it installs is
# kept. Needs mmdebstrap (scripts/deps.sh --test) and, on a cold cache, Debian's registry and
# PyPI. `run` and `missing` carry the packages with scripts/carry.sh download, the session's own
# step, its cache (CARRY_DEB_CACHE) the rehearsal's carry-debs-KEY, keyed by scripts/deps.txt: the
# registry serves only what the cache lacks (the exact version of each package), so a second run
# reads none of the carried packages from the network (`carry-offline` checks it).
set -eEuo pipefail
# command substitutions stop at their first failure too (a `fail` inside $(...) ends the script)
shopt -s inherit_errexit
SUITE=bookworm
WHEELS=(h5py numpy cmake nvidia-nccl-cu13)
say() { echo "rehearsal: $*" >&2; }
# One line for the first failure, also when it happened in a command substitution or a subshell,
# whose callers then fail in turn: the first to say it marks it said (a file: shared by subshells).
said=${REHEARSAL_SAID:-$(mktemp -u "${TMPDIR:-/tmp}/rehearsal-said.XXXXXX")}
export REHEARSAL_SAID=$said
fail() {
  [[ -e $said ]] || echo "rehearsal: FAIL: $*" >&2
  : >"$said"
  exit 1
}
on_err() {
  local rc=$?
  [[ -e $said ]] || echo "rehearsal: FAIL: $BASH_COMMAND (exit $rc)" >&2
  : >"$said"
}
trap on_err ERR

# Inside the root --------------------------------------------------------------------------------

inside() {
  local src=$1 b rc missing bad=0 mpi="mpirun --allow-run-as-root --oversubscribe -n"
  cd "$src"
  say "[root] $(. /etc/os-release; echo "$PRETTY_NAME"), python3 $(python3 -c 'import h5py, numpy, sys
print(sys.version.split()[0], "h5py", h5py.__version__, "numpy", numpy.__version__)')"
  for b in gcc cc mpirun h5dump; do
    ! command -v "$b" >/dev/null || fail "the bare root has $b before the carry: not bare"
  done
  bash /carry/carry.sh install /carry || fail "carry.sh install /carry (exit $?)"
  for b in build/golmpi build/tools/golmpi-render build/tools/golmpi-bounds; do
    [[ -x $b ]] || continue
    missing=$(ldd "$b" | awk '$3 == "not" { print $1 }' | tr '\n' ' ')
    if [[ -n $missing ]]; then
      say "FAIL: $b cannot load ${missing% } in the bare root after the carry"
      bad=1
    else
      say "ldd $b: every library found ($(ldd "$b" | grep -c '=> /') libraries)"
    fi
  done
  if ((bad)); then
    # what the session would see next: gpu_check's own check of the libraries
    GPU_CHECK_NO_PROBE=1 bash scripts/gpu_check.sh --parts env >/dev/null || true
    : >"$said"
    exit 1
  fi
  rc=0
  bash scripts/gpu_check.sh --dry-run /tmp/dry.md 2>/tmp/dry.err || rc=$?
  ((rc == 0)) || { cat /tmp/dry.err >&2; fail "gpu_check.sh --dry-run: exit $rc"; }
  say "gpu_check.sh --dry-run: $(grep -c . /tmp/dry.err) lines of commands, exit 0"
  rc=0
  GPU_CHECK_NO_PROBE=1 bash scripts/gpu_check.sh --parts env /tmp/env.md 2>/tmp/env.err || rc=$?
  if [[ -z ${REHEARSAL_CUDA:-} ]]; then
    # a CPU-only build: nothing for a GPU session; gpu_check must say so before running anything
    ((rc == 2)) && grep -q "configured without CUDA" /tmp/env.err ||
      { cat /tmp/env.err >&2; fail "gpu_check.sh on a CPU-only build: exit $rc, no clear refusal"; }
    say "CPU-only build: gpu_check.sh refuses it (exit 2): $(grep -m1 'without CUDA' /tmp/env.err)"
  else
    ((rc == 0)) || { cat /tmp/env.err /tmp/env.md >&2; fail "gpu_check.sh --parts env: exit $rc"; }
    grep -E "^\| (CUDA runtime|NCCL|MPI launcher|python)" /tmp/env.md |
      sed 's/^/rehearsal: [env] /' >&2
    grep -Eq "^\| CUDA runtime \(golmpi's\) \| [0-9]+\.[0-9]+ \(/" /tmp/env.md ||
      fail "gpu_check.sh --parts env names no CUDA runtime version"
    grep -Eq "^\| NCCL \(golmpi's\) \| [0-9]+\.[0-9]+\.[0-9]+ \(/" /tmp/env.md ||
      fail "gpu_check.sh --parts env names no NCCL version"
  fi
  for c in ref_77x23_p2_dead_B3S23 ref_131x37_p2_torus_B36S23_packed; do
    OMP_NUM_THREADS=1 python3 tests/integration.py --mpiexec "$mpi" --golmpi build/golmpi \
      --backend cpu "$c" >&2 || fail "2-rank CPU run $c under the carried mpirun"
  done
  say "[root] PASS"
}

# missing_commands WHEN: the commands of scripts/deps.txt's WHEN lines that are not found here
missing_commands() {
  local w missing=()
  for w in $(awk -v when="$1" '!/^#/ && $2 == when { for (i = 3; i <= NF; i++) print $i }' \
      scripts/deps.txt); do
    [[ $w == py:* || $w == cmake:* ]] || command -v "$w" >/dev/null || missing+=("$w")
  done
  echo "${missing[*]}"
}

# readme_block NAME: the fenced block right under the README's marker <!-- readme-test: NAME -->,
# its lines as printed
readme_block() {
  awk -v marker="<!-- readme-test: $1 -->" '
    $0 == marker { at = 1; next }
    at == 1 && /^```/ { at = 2; next }
    at == 1 { exit }
    at == 2 && /^```/ { exit }
    at == 2 { print }' README.md
}

# readme_script SRC QUICK GUN [ENV]: the shell script of the README's blocks as printed, run in SRC
# (with ENV, an assignment, exported first), with the promises of the quick start's source line
# checked in the same shell, then the Gosper gun example from another directory
readme_script() {
  local src=$1 quick=$2 gun=$3 env=${4:-}
  echo "trap 'echo \"readme: FAILED: \$BASH_COMMAND (exit \$?)\"' ERR"
  echo "set -eo pipefail"
  [[ -z $env ]] || echo "export $env"
  echo "cd $src"
  printf '%s\n' "$quick"
  echo "echo 'readme: quick start done'"
  # the promises of the source line, checked in the same shell
  echo "for b in golmpi golmpi-render golmpi-view; do"
  echo "  [[ \$(command -v \$b) == $src/install/bin/\$b ]] || { echo \"readme: FAILED: after env.sh, \$b is '\$(command -v \$b)'\"; exit 1; }"
  echo "done"
  # grep reads the whole page: man stopped by a closed pipe would fail the pipeline
  echo "man golmpi 2>&1 | grep '^GOLMPI(1)' >/dev/null || { echo 'readme: FAILED: man golmpi after env.sh shows no GOLMPI(1)'; exit 1; }"
  # "From any directory"
  echo "mkdir -p ~/gun && cd ~/gun"
  printf '%s\n' "$gun"
  echo "[[ -s gun.h5 && -s more.h5 ]] || { echo 'readme: FAILED: the gun example wrote no gun.h5 or more.h5'; exit 1; }"
  echo "echo 'readme: examples-gun done'"
}

# readme_fresh_blocks: in the tree's root, the README's blocks the fresh rehearsal runs, in quick
# and gun, and light, the lighter mode its last line runs in; refuses a README whose quick start
# does not end with bash scripts/test.sh or that names no lighter run of it (the rehearsal would
# run a mode the README never promised). rehearsal.sh readme SRC runs it alone, without a root.
readme_fresh_blocks() {
  light=GOLMPI_TEST_QUICK=1
  # the README's blocks as printed, the quick start whole: its last line, the whole test suite,
  # in the lighter mode the README names (most of CI's time otherwise)
  quick=$(readme_block quick-start)
  gun=$(readme_block examples-gun)
  [[ -n $quick && -n $gun ]] || fail "README.md has no fenced block under its quick-start or examples-gun marker"
  [[ $(tail -1 <<<"$quick") == "bash scripts/test.sh "* ]] ||
    fail "the README's quick start does not end with bash scripts/test.sh: $(tail -1 <<<"$quick")"
  grep -qF "\`$light bash scripts/test.sh\`" README.md ||
    fail "the README names no lighter run of scripts/test.sh (\`$light bash scripts/test.sh\`)"
}

inside_fresh() {
  local src=$1 t0=$SECONDS b missing quick gun user=newuser light verdict
  cd "$src"
  export PATH=$PATH:/usr/sbin:/sbin
  say "[root] $(. /etc/os-release; echo "$PRETTY_NAME"), $(dpkg-query -W | wc -l) packages"
  for b in python3 gcc cmake mpirun; do
    ! command -v "$b" >/dev/null || fail "the bare root has $b before the quick start: not bare"
  done
  missing=$(missing_commands base)
  [[ -z $missing ]] || fail "a bare Debian root lacks $missing, which scripts/deps.txt lists as base"
  readme_fresh_blocks
  # a new user: not root, with sudo as on a fresh cloud machine, owning a clone of the tree
  useradd -m -s /bin/bash "$user"
  echo "$user ALL=(ALL) NOPASSWD:ALL" >/etc/sudoers.d/"$user"
  chown -R "$user:" "$src"
  readme_script "$src" "$quick" "$gun" "$light" >/tmp/readme.sh
  runuser -l "$user" -c "bash /tmp/readme.sh" >/tmp/readme.log 2>&1 || {
    tail -40 /tmp/readme.log >&2
    fail "the README as printed ($light), as user $user: $(grep -m1 '^readme: FAILED' /tmp/readme.log || echo "no line said why")"
  }
  # a configure without the tests' packages says in one line what it left out (tests/helpers.cmake)
  grep -q "tests not registered for want of Python3 (package python3," /tmp/readme.log ||
    fail "scripts/run.sh's configure without python3 did not say which tests it left out"
  # scripts/test.sh's verdict: its quick tests passed, nothing left unregistered or skipped for a
  # package (test.sh fails on either), the other stages said left out
  verdict=$(grep -m1 "^test.sh: " /tmp/readme.log || true)
  [[ $verdict == "test.sh: PASS"* ]] || fail "scripts/test.sh ($light) said: ${verdict:-nothing}"
  grep -Eq "^stage main: [1-9][0-9]* tests, [0-9]+ passed, 0 failed" /tmp/readme.log ||
    fail "scripts/test.sh ($light) ran no tests in its main stage"
  grep -q "^stage sim: left out ($light)" /tmp/readme.log &&
    grep -q "^stage sanitize: left out ($light)" /tmp/readme.log ||
    fail "scripts/test.sh ($light) did not say it left the sim and sanitize stages out"
  [[ ! -s build/tests_not_registered.txt ]] ||
    fail "tests left unregistered after scripts/test.sh: $(cat build/tests_not_registered.txt)"
  for pkg in $(bash scripts/deps.sh --list --test); do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" ||
      fail "scripts/test.sh (scripts/deps.sh --test) did not install $pkg"
  done
  python3 tests/test_deps_list.py installed . >&2 ||
    fail "after scripts/test.sh, commands or modules the tests need are missing (above)"
  missing=$(missing_commands run)
  [[ -z $missing ]] || fail "after the quick start, not found: $missing"
  say "[root] PASS: the README's quick start as printed ($light) and examples-gun, as $user:" \
    "$(grep -m1 -o 'this run.s files, .* in all' /tmp/readme.log); $(grep -m1 '^stage main:' /tmp/readme.log);" \
    "$verdict; golmpi, golmpi-render, golmpi-view, man golmpi; gun.h5, more.h5;" \
    "$(dpkg-query -W | wc -l) packages ($((SECONDS - t0)) s)"
}

# The whole quick start as printed, its last line `bash scripts/test.sh` included, then the gun
# example, as root (the suite's tests that need root run: nothing may skip but for want of a
# GPU, which test.sh's verdict checks). Not run by ctest: about 50 minutes on 2 cores.
inside_fresh_full() {
  local src=$1 t0=$SECONDS quick gun
  cd "$src"
  export PATH=$PATH:/usr/sbin:/sbin
  say "[root] $(. /etc/os-release; echo "$PRETTY_NAME"), $(dpkg-query -W | wc -l) packages, $(nproc) CPUs"
  ! command -v gcc >/dev/null || fail "the bare root has gcc before the quick start: not bare"
  quick=$(readme_block quick-start)
  gun=$(readme_block examples-gun)
  [[ -n $quick && -n $gun ]] || fail "README.md has no fenced block under its quick-start or examples-gun marker"
  [[ $(tail -1 <<<"$quick") == "bash scripts/test.sh "* || $(tail -1 <<<"$quick") == "bash scripts/test.sh" ]] ||
    fail "the README's quick start does not end with bash scripts/test.sh: $(tail -1 <<<"$quick")"
  readme_script "$src" "$quick" "$gun" >/tmp/readme.sh
  # as the README says for root: mpirun refuses it otherwise (the gun example)
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  bash /tmp/readme.sh 2>&1 | tee /tmp/readme.log ||
    fail "the README as printed, as root: $(grep -m1 '^readme: FAILED' /tmp/readme.log || echo "no line said why")"
  say "[root] PASS: the README's quick start as printed, bash scripts/test.sh included, and" \
    "examples-gun, as root ($(((SECONDS - t0) / 60)) min)"
}

# Outside: the cache --------------------------------------------------------------------------

cache_dir() { echo "${GOLMPI_REHEARSAL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/golmpi/rehearsal}"; }

# debian_root [PKG...]: the path of the cached minimal Debian root with these packages, built once
# per package list. Its dpkg unpacks without fsync (force-unsafe-io, as Debian's container images
# are set): a rehearsal root is thrown away, so the files of its 600 packages need not each reach
# the disk, which the stages beside it write to; what the README's commands do is unchanged.
debian_root() {
  local cache key dir tmp include=()
  cache=$(cache_dir)
  key=$(printf '%s ' "$SUITE" minbase unsafe-io "$@" | sha256sum | cut -c1-12)
  dir=$cache/debian-$SUITE-$key
  (($# == 0)) || include=(--include="$(IFS=,; echo "$*")")
  if [[ ! -d $dir ]]; then
    command -v mmdebstrap >/dev/null || fail "no mmdebstrap (scripts/deps.sh --test installs it)"
    mkdir -p "$cache"
    tmp=$(mktemp -d "$cache/tmp.XXXXXX")
    say "building the Debian $SUITE root (minbase${*:+, $*}) with mmdebstrap, into $dir"
    mmdebstrap --quiet --mode=root --variant=minbase --dpkgopt=force-unsafe-io "${include[@]}" \
      "$SUITE" "$tmp/root" >&2 ||
      { rm -rf --one-file-system "$tmp"; fail "mmdebstrap $SUITE"; }
    mv "$tmp/root" "$dir"
    rmdir "$tmp"
  fi
  echo "$dir"
}

# wheels PYVER: the cached wheel files, downloaded once (pip download, for the root's python)
wheels() {
  local pyver=$1 dir pip
  dir=$(cache_dir)/wheels-cp${pyver/./}
  if [[ ! -f $dir/.complete ]]; then
    pip=$(command -v pip3 || command -v pip || true)
    [[ -n $pip ]] || pip="python3 -m pip"
    mkdir -p "$dir"
    say "downloading wheels ${WHEELS[*]} for python $pyver into $dir"
    $pip download -q -d "$dir" --only-binary=:all: --no-deps --python-version "$pyver" \
      --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
      --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 "${WHEELS[@]}" >&2 ||
      fail "pip download ${WHEELS[*]} (PyPI unreachable?)"
    touch "$dir/.complete"
  fi
  echo "$dir"
}

# Outside: the stand-in GPU machine --------------------------------------------------------------

# install_wheel WHEEL SITE PREFIX: what pip install does with a wheel, with the files' modes
install_wheel() {
  python3 - "$@" <<'PY'
import os, re, shutil, sys, zipfile
wheel, site, prefix = sys.argv[1:]
where = {"purelib": site, "platlib": site, "scripts": prefix + "/bin", "data": prefix}
with zipfile.ZipFile(wheel) as z:
    for info in z.infolist():
        m = re.match(r"[^/]+\.data/([^/]+)/(.*)", info.filename)
        dest = os.path.join(where[m.group(1)], m.group(2)) if m else os.path.join(site, info.filename)
        if info.is_dir():
            continue
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        with z.open(info) as src, open(dest, "wb") as out:
            shutil.copyfileobj(src, out)
        mode = info.external_attr >> 16 & 0o777
        os.chmod(dest, mode or 0o644)
PY
}

# stand_in ROOT: the cached root with the wheels and the CUDA runtime, as the GPU machine has them
stand_in() {
  local base pyver site whl cache key dir tmp cudart real ver libdir
  base=$(debian_root python3)
  pyver=$(basename "$(ls -d "$base"/usr/lib/python3.[0-9]* | head -1)")
  pyver=${pyver#python}
  cudart=""
  [[ -n ${REHEARSAL_CUDA:-} ]] && cudart=$REHEARSAL_CUDA
  cache=$(cache_dir)
  whl=$(wheels "$pyver")
  key=$( (echo "$base"; ls "$whl"; [[ -z $cudart ]] || sha256sum "$cudart") | sha256sum | cut -c1-12)
  dir=$cache/standin-$key
  if [[ ! -d $dir ]]; then
    tmp=$(mktemp -d "$cache/tmp.XXXXXX")
    say "preparing the stand-in GPU machine in $dir"
    cp -a "$base" "$tmp/root"
    site=$tmp/root/usr/local/lib/python$pyver/dist-packages
    for w in "$whl"/*.whl; do install_wheel "$w" "$site" "$tmp/root/usr/local"; done
    # pip's cmake runs its binaries through entry points; links do the same here
    for b in cmake ctest; do ln -sf "../lib/python$pyver/dist-packages/cmake/data/bin/$b" \
      "$tmp/root/usr/local/bin/$b"; done
    if [[ -n $cudart ]]; then
      # NVIDIA's layout: cuda -> cuda-X.Y, lib64 -> targets/x86_64-linux/lib, nothing in ld.so.conf
      real=$(readlink -f "$cudart")
      ver=$(basename "$(readlink -f /usr/local/cuda)")
      [[ $ver == cuda-* ]] || ver=cuda-13
      libdir=$tmp/root/usr/local/$ver/targets/x86_64-linux/lib
      mkdir -p "$libdir"
      cp -a "$(dirname "$real")"/libcudart.so* "$libdir/"
      ln -s targets/x86_64-linux/lib "$tmp/root/usr/local/$ver/lib64"
      ln -s "$ver" "$tmp/root/usr/local/cuda"
    fi
    mv "$tmp/root" "$dir"
    rmdir "$tmp"
  fi
  echo "$dir"
}

# in_root LOWER MODE SRC [BUILD CARRY]: `rehearsal.sh MODE` in a chroot on an overlay of LOWER
# (files written there are dropped), with the source tree at /work/golmpi, and the build tree and
# the carried packages (/carry) when given. Uses $work, which it fills. With REHEARSAL_DEBS (a
# directory of debs_dir): while it is being filled, it is the root's apt archive (what apt fetches
# lands there, and what it holds is not fetched again); once filled (REHEARSAL_OFFLINE=1), it is
# the root's only apt source, and the root has no network but its loopback.
in_root() {
  local net=()
  [[ ${REHEARSAL_OFFLINE:-0} != 1 ]] || net=(--net)
  mkdir -p "$work/upper" "$work/ovl" "$work/root"
  unshare --mount "${net[@]}" --propagation private bash -euo pipefail -c '
    lower=$1 work=$2 mode=$3 src=$4 build=${5:-} carry=${6:-} root=$2/root
    debs=${REHEARSAL_DEBS:-} offline=${REHEARSAL_OFFLINE:-0}
    cleanup() {
      for m in tmp dev/shm dev sys proc var/cache/apt/archives var/cache/golmpi-debs; do
        umount -l "$root/$m" 2>/dev/null || true
      done
      umount -l "$root" 2>/dev/null || true
    }
    trap cleanup EXIT
    if ! mount -t overlay overlay -o "lowerdir=$lower,upperdir=$work/upper,workdir=$work/ovl" \
      "$root" 2>/dev/null; then
      cp -a "$lower/." "$root/"
    fi
    mkdir -p "$root/work/golmpi"
    # the full mode gets SRC whole, a clone as a user has it (tests read it with git)
    keep_git=--exclude=./.git
    [[ $mode != inside-fresh-full ]] || keep_git=--exclude=./.git/nothing
    tar -C "$src" "$keep_git" --exclude="./build*" --exclude="*.h5" --exclude="*.xmf" \
      --exclude=__pycache__ --exclude=./install --exclude=./runs -cf - . | tar -C "$root/work/golmpi" -xf -
    if [[ -n $build ]]; then
      mkdir -p "$root/work/golmpi/build"
      # other tests run beside this one and write in the build tree (the fuzz corpora, scratch
      # outputs): those are not the build a GPU session carries, and a file they change or remove
      # while it is read is no error of the carry (GNU tar then exits 1, "some files differ")
      { tar -C "$build" --exclude="*.h5" --exclude="*.h5.part" --exclude="*.xmf" \
          --exclude=./Testing --exclude=./tests/fuzz --exclude=./test-results --ignore-failed-read \
          --warning=no-file-changed --warning=no-file-removed -cf - . || (($? == 1)); } |
        tar -C "$root/work/golmpi/build" -xf -
    fi
    if [[ -n $carry ]]; then mkdir -p "$root/carry" && cp -a "$carry/." "$root/carry/"; fi
    # the registry by name, as on the machine itself
    cp -L /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
    # the names as an installed Debian system has them (its installer writes localhost and the
    # host name): without them each lookup of the host name (mpirun, at every start) goes to DNS
    printf "127.0.0.1\tlocalhost\n127.0.1.1\t%s\n::1\tlocalhost ip6-localhost ip6-loopback\n" \
      "$(hostname)" >"$root/etc/hosts"
    if [[ $mode == inside-fresh-full ]]; then
      # the whole suite rehearses machines itself (PyPI over TLS): the local CAs of this machine
      # (a TLS proxy of the site; none on most machines), and the pointer of pip to the bundle
      cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/" 2>/dev/null &&
        chroot "$root" update-ca-certificates >/dev/null || true
      cp /etc/pip.conf "$root/etc/pip.conf" 2>/dev/null || true
    fi
    if [[ -n $debs && $offline == 1 ]]; then
      # the cached packages, the only source; a network namespace of its own, up only on lo
      ip link set lo up
      mkdir -p "$root/var/cache/golmpi-debs"
      mount --bind "$debs" "$root/var/cache/golmpi-debs"
      mount -o remount,bind,ro "$root/var/cache/golmpi-debs"
      echo "deb [trusted=yes] file:/var/cache/golmpi-debs ./" >"$root/etc/apt/sources.list"
      rm -f "$root"/etc/apt/sources.list.d/*
    elif [[ -n $debs ]]; then
      mount --bind "$debs" "$root/var/cache/apt/archives"
    fi
    # packages installed in the root start no daemons (munged, slurmctld) on this machine
    printf "#!/bin/sh\nexit 101\n" >"$root/usr/sbin/policy-rc.d"
    chmod 755 "$root/usr/sbin/policy-rc.d"
    mount -t proc proc "$root/proc"
    if [[ $mode == inside-fresh-full ]]; then
      # the whole /sys and /dev, as a machine has them (slurmd of the cluster tests needs the
      # cgroup file system); room for the suite: shared memory for its MPI jobs, /tmp for its
      # tests (on disk here)
      mount --rbind /sys "$root/sys"
      mount --rbind /dev "$root/dev"
      mount -t tmpfs -o size=4g tmpfs "$root/dev/shm"
    else
      mount --bind /sys "$root/sys"
      mount --bind /dev "$root/dev"
      mount -t tmpfs -o size=1g tmpfs "$root/dev/shm"
      mount -t tmpfs -o size=2g tmpfs "$root/tmp"
    fi
    chroot "$root" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
      HOME=/root TMPDIR=/tmp LANG=C.UTF-8 REHEARSAL_CUDA="${REHEARSAL_CUDA:-}" \
      bash /work/golmpi/tests/rehearsal.sh "$mode" /work/golmpi
  ' rehearsal "$1" "$work" "${@:2}" || { : >"$said"; return 1; } # the root said why
}

# a fresh work directory for in_root, removed on exit (the mounts live in their own namespace:
# nothing of them outlives it, so this removes files only)
new_work() {
  work=$(mktemp -d "${TMPDIR:-/tmp}/rehearsal.XXXXXX")
}

# rehearse SRC BUILD [PKG_LEFT_OUT]: the GPU session's rehearsal; its exit status
rehearse() {
  local src build omit=${3:-} lower carry bins=() t0=$SECONDS
  src=$(cd "$1" && pwd) build=$(cd "$2" && pwd)
  carry_bins "$build"
  # the CUDA runtime golmpi loads here, for the stand-in; none in a CPU-only build
  REHEARSAL_CUDA=$(ldd "$build/golmpi" | awk '$1 ~ /^libcudart\.so/ && $3 ~ /^\// { print $3 }')
  export REHEARSAL_CUDA
  mkdir -p "$(cache_dir)"
  exec 9>"$(cache_dir)/lock"
  flock 9
  lower=$(stand_in)
  flock -u 9
  say "stand-in ready ($((SECONDS - t0)) s)"
  new_work
  carry=$work/carry
  # exactly the session's carry: the packages golmpi's binaries need, read from the binaries; the
  # cache's packages copied, the rest fetched into it. Under the lock: a download replaces the
  # other versions of what it fetches in the cache.
  flock 9
  CARRY_DEB_CACHE=$(carry_debs_dir "$src") bash "$src/scripts/carry.sh" download "$carry" \
    "${bins[@]}" ${omit:+--exclude "$omit"} 2>&1 | sed 's/^/rehearsal: [host] /' >&2
  flock -u 9
  [[ -f $carry/MANIFEST ]] || fail "carry.sh download wrote no MANIFEST"
  say "carried $(wc -l <"$carry/MANIFEST") packages ($((SECONDS - t0)) s)"
  in_root "$lower" inside "$src" "$build" "$carry"
  say "PASS in $((SECONDS - t0)) s"
}

# keyed_dir NAME SALT SRC: the cache's directory NAME-KEY, KEY a hash of SALT and SRC's
# scripts/deps.txt; a new key removes the directories of older ones of that NAME
keyed_dir() {
  local cache key old
  cache=$(cache_dir)
  key=$( (echo "$2"; cat "$3/scripts/deps.txt") | sha256sum | cut -c1-12)
  for old in "$cache/$1"-*; do
    [[ ! -d $old || $old == "$cache/$1-$key" ]] || rm -rf --one-file-system "$old"
  done
  mkdir -p "$cache/$1-$key"
  echo "$cache/$1-$key"
}

# debs_dir SRC LOWER: the cache of the Debian packages the quick start and scripts/deps.sh --test
# install on the root LOWER, keyed by SRC's scripts/deps.txt and that root
debs_dir() { keyed_dir debs "$SUITE $(basename "$2")" "$1"; }

# carry_debs_dir SRC: the cache of the carried packages (scripts/carry.sh's CARRY_DEB_CACHE),
# keyed by SRC's scripts/deps.txt, from which the build's libraries come. Within it carry.sh
# keeps one version of each package.
carry_debs_dir() { keyed_dir carry-debs carry "$1"; }

# carry_bins BUILD: into the caller's array bins, the binaries whose packages the GPU session
# carries: golmpi, and golmpi-render where built
carry_bins() {
  [[ -x $1/golmpi ]] || fail "no golmpi in $1"
  bins=("$1/golmpi")
  [[ ! -x $1/tools/golmpi-render ]] || bins+=("$1/tools/golmpi-render")
}

# carry_offline SRC BUILD: scripts/carry.sh download of BUILD's binaries with the carry cache, first
# with the network (it fetches what the cache lacks), then in a network namespace of its own with
# no interface up, where the registry cannot be reached: it must pass and write the same MANIFEST
# and the same files. The same download there with an empty cache must fail, or the namespace
# would prove nothing.
carry_offline() {
  local src build bins=() debs t0=$SECONDS carry
  src=$(cd "$1" && pwd) build=$(cd "$2" && pwd)
  carry=(bash "$src/scripts/carry.sh" download)
  carry_bins "$build"
  mkdir -p "$(cache_dir)"
  exec 9>"$(cache_dir)/lock"
  flock 9
  debs=$(carry_debs_dir "$src")
  new_work
  CARRY_DEB_CACHE=$debs "${carry[@]}" "$work/net" "${bins[@]}" 2>&1 |
    sed 's/^/rehearsal: [network] /' >&2 || fail "carry.sh download with the network (above)"
  say "with the network: $(wc -l <"$work/net/MANIFEST") packages ($((SECONDS - t0)) s)"
  CARRY_DEB_CACHE=$debs unshare --net "${carry[@]}" "$work/none" "${bins[@]}" 2>&1 |
    sed 's/^/rehearsal: [no network] /' >&2 ||
    fail "carry.sh download with the cache $debs and no network (above): the cache lacks packages"
  flock -u 9
  cmp "$work/net/MANIFEST" "$work/none/MANIFEST" >&2 ||
    fail "the MANIFEST without the network differs from the one with it"
  [[ $(cd "$work/net" && sha256sum ./*.deb) == "$(cd "$work/none" && sha256sum ./*.deb)" ]] ||
    fail "the .deb files without the network differ from those with it"
  say "without the network, from the cache: the same MANIFEST and files ($((SECONDS - t0)) s)"
  if CARRY_DEB_CACHE=$work/empty unshare --net "${carry[@]}" "$work/empty-carry" "${bins[@]}" \
      >"$work/empty.log" 2>&1; then
    fail "carry.sh download with an empty cache and no network passed: the namespace has a network"
  fi
  grep -q "apt-get download failed" "$work/empty.log" ||
    { cat "$work/empty.log" >&2; fail "carry.sh download with an empty cache and no network failed otherwise than fetching"; }
  say "with an empty cache and no network it fails fetching, as it must ($((SECONDS - t0)) s)"
}

# debs_index DIR: DIR a flat apt repository of the packages in it (its Packages index, made with
# dpkg-deb alone), marked complete
debs_index() {
  local deb n=0
  : >"$1/Packages.tmp"
  for deb in "$1"/*.deb; do
    [[ -e $deb ]] || continue
    { dpkg-deb -f "$deb"
      echo "Filename: ./$(basename "$deb")"
      echo "Size: $(stat -c %s "$deb")"
      echo "SHA256: $(sha256sum <"$deb" | cut -d" " -f1)"
      echo; } >>"$1/Packages.tmp" || fail "dpkg-deb -f $deb"
    n=$((n + 1))
  done
  ((n > 0)) || fail "no packages in $1 after the quick start and scripts/deps.sh --test"
  mv "$1/Packages.tmp" "$1/Packages"
  touch "$1/.complete"
  say "cached $n packages ($(du -sh "$1" | cut -f1)) in $1: the next run reads them, not the registry"
}

# fresh SRC [full|required]: the new user's machine; full: the whole quick start, as root, on a
# fresh cloud machine's root (minbase, ca-certificates, git and sudo), SRC copied whole: give it a
# clean clone. The packages of the other two come from the cache (debs_dir) once a passing run
# filled it, with no network; until then from Debian's registry (required never fills it: it stops
# before scripts/deps.sh --test)
fresh() {
  local src lower t0=$SECONDS how=${2:-} full="" debs=""
  src=$(cd "$1" && pwd)
  [[ $how != full ]] || full=1
  mkdir -p "$(cache_dir)"
  exec 9>"$(cache_dir)/lock"
  flock 9
  if [[ -n $full ]]; then lower=$(debian_root ca-certificates git sudo); else lower=$(debian_root sudo); fi
  [[ -n $full ]] || debs=$(debs_dir "$src" "$lower")
  flock -u 9
  export REHEARSAL_DEBS=$debs REHEARSAL_OFFLINE=0
  if [[ -n $debs && -f $debs/.complete ]]; then
    REHEARSAL_OFFLINE=1
    say "bare root ready ($((SECONDS - t0)) s); packages from $debs, no network"
  else
    say "bare root ready ($((SECONDS - t0)) s); packages from Debian's registry${debs:+, kept in $debs}"
  fi
  new_work
  in_root "$lower" "inside-fresh${full:+-full}" "$src"
  if [[ -n $debs && $REHEARSAL_OFFLINE == 0 && -z $how ]]; then
    flock 9
    debs_index "$debs"
    flock -u 9
  fi
  say "PASS in $((SECONDS - t0)) s"
}

# own_rehearsal LOG FUNCTION ARGS...: FUNCTION ARGS as a rehearsal of its own, its output into
# LOG, that stops at its first failure (not in a condition, where errexit would be off) and says it
# with a marker of its own; rc= its exit status (the modes that expect it to fail)
own_rehearsal() {
  local log=$1
  shift
  set +e
  trap - ERR
  (
    set -e
    said=$(mktemp -u "${TMPDIR:-/tmp}/rehearsal-said.XXXXXX")
    trap on_err ERR
    trap 'rm -f "$said"; [[ -z $work ]] || rm -rf --one-file-system "$work"' EXIT
    "$@"
  ) >"$log" 2>&1
  rc=$?
  trap on_err ERR
  set -e
}

(($# >= 2)) || { sed -n '2,/^set -eEuo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
mode=$1
shift
work=""
if [[ -z ${REHEARSAL_OWNER:-} ]]; then
  # the process that made the marker and the work directory removes them
  export REHEARSAL_OWNER=$$
  trap 'rm -f "$said"; [[ -z $work ]] || rm -rf --one-file-system "$work"' EXIT
fi
case $mode in
inside) inside "$1" ;;
inside-fresh) inside_fresh "$1" ;;
inside-fresh-full) inside_fresh_full "$1" ;;
readme)
  (($# == 1)) || fail "readme needs SRC"
  cd "$1"
  quick="" gun="" light=""
  readme_fresh_blocks
  echo "PASS: README.md's quick start ends with bash scripts/test.sh and names \`$light bash scripts/test.sh\`"
  ;;
fresh-full)
  (($# == 1)) || fail "fresh-full needs SRC"
  if [[ $(id -u) != 0 ]]; then echo "SKIP: the rehearsal needs root (chroot, mount)"; exit 77; fi
  fresh "$1" full
  echo PASS
  ;;
fresh)
  (($# == 1)) || fail "fresh needs SRC"
  if [[ $(id -u) != 0 ]]; then echo "SKIP: the rehearsal needs root (chroot, mount)"; exit 77; fi
  fresh "$1"
  echo PASS
  ;;
run | missing)
  (($# == 2)) || fail "$mode needs SRC and BUILD"
  if [[ $(id -u) != 0 ]]; then echo "SKIP: the rehearsal needs root (chroot, mount)"; exit 77; fi
  if [[ $mode == run ]]; then rehearse "$1" "$2"; echo PASS; exit 0; fi
  # the last library golmpi names that the bare root lacks, and the package that owns it here
  base=$(debian_root python3)
  lib="" pkg=""
  for l in $(readelf -d "$2/golmpi" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
    [[ -n $(find "$base" -name "$l" -print -quit 2>/dev/null) ]] && continue
    path=$(ldd "$2/golmpi" | awk -v l="$l" '$1 == l { print $3 }')
    o=$(dpkg -S "$(readlink -f "$path")" 2>/dev/null || dpkg -S "$path" 2>/dev/null ||
        dpkg -S "/usr$path" 2>/dev/null || true)
    [[ -n $o ]] && lib=$l pkg=${o%%:*}
  done
  [[ -n $pkg ]] || fail "golmpi names no library that a Debian package owns and the bare root lacks"
  say "leaving $pkg ($lib) out of the carry: the rehearsal must fail naming $lib"
  log=$(mktemp "${TMPDIR:-/tmp}/rehearsal-missing.XXXXXX")
  own_rehearsal "$log" rehearse "$1" "$2" "$pkg"
  out=$(cat "$log")
  rm -f "$log"
  echo "$out" | tail -30
  ((rc != 0)) || fail "the rehearsal passed without $pkg"
  grep -q "golmpi cannot load .*$lib" <<<"$out" || fail "no message naming $lib from ldd"
  grep -q "^gpu_check: .*$lib" <<<"$out" || fail "gpu_check.sh did not name $lib"
  echo "PASS: without $pkg the rehearsal fails naming $lib"
  ;;
carry-offline)
  (($# == 2)) || fail "carry-offline needs SRC and BUILD"
  if [[ $(id -u) != 0 ]]; then echo "SKIP: the network namespace needs root"; exit 77; fi
  carry_offline "$1" "$2"
  echo "PASS: with the cache filled, carry.sh download reads nothing from the network"
  ;;
fresh-required)
  (($# == 1)) || fail "fresh-required needs SRC"
  if [[ $(id -u) != 0 ]]; then echo "SKIP: the rehearsal needs root (chroot, mount)"; exit 77; fi
  # a copy of the tree whose tests REQUIRE a Python (a test-only find_package made REQUIRED): the
  # rehearsal of a new user's machine must stop at the quick start's first line with CMake's error
  copy=$(mktemp -d "${TMPDIR:-/tmp}/rehearsal-required.XXXXXX")
  log=$copy.log
  trap 'rm -f "$said" "$log"; rm -rf --one-file-system "$copy"' EXIT
  tar -C "$1" --exclude=./.git --exclude="./build*" --exclude=./install --exclude=./runs \
    --exclude="*.h5" -cf - . | tar -C "$copy" -xf -
  sed -i '1i find_package(Python3 COMPONENTS Interpreter REQUIRED)' "$copy/tests/halo.cmake"
  say "tests/halo.cmake of a copy REQUIRES Python3: the fresh rehearsal must fail configuring"
  own_rehearsal "$log" fresh "$copy" required
  tail -30 "$log"
  ((rc != 0)) || fail "the fresh rehearsal passed with a test-only REQUIRED Python3"
  grep -q "Could NOT find Python3" "$log" || fail "no 'Could NOT find Python3' from the configure"
  grep -q "^rehearsal: FAIL: the README as printed.*bash scripts/run.sh" "$log" &&
    grep -q "^run.sh: FAILED: cmake -S . -B build" "$log" ||
    fail "the rehearsal did not fail at scripts/run.sh's configure"
  echo "PASS: with a test-only REQUIRED Python3 the fresh rehearsal fails at run.sh's configure"
  ;;
*) fail "unknown mode $mode (run, missing, carry-offline, fresh, fresh-full, fresh-required, readme)" ;;
esac
