#!/bin/bash
# The GPU session rehearsed on a bare machine, without a GPU: a minimal Debian 12 root (mmdebstrap)
# stands in for the GPU machine (no compiler, no Open MPI, no HDF5, no cJSON; python3 with h5py
# and numpy, cmake and ctest from pip wheels; the CUDA runtime copied from the toolkit in NVIDIA's
# layout; NCCL from PyPI's nvidia-nccl-cu13 wheel). The session's steps, with scripts/carry.sh:
# carry the build tree and the packages, install them in the root, and inside it (chroot): ldd of
# golmpi and golmpi-render with nothing missing; gpu_check.sh --dry-run; GPU_CHECK_NO_PROBE=1
# gpu_check.sh --parts env with the CUDA runtime and NCCL versions golmpi loads; 2-rank CPU runs
# under the carried mpirun whose frames the root's h5py checks against tests/reference.py.
#
#   tests/rehearsal.sh run SRC BUILD       the rehearsal; exit 0 when every step passed
#   tests/rehearsal.sh missing SRC BUILD   the same with one package left out of the carry (the
#                                          owner of the last library golmpi names that the bare
#                                          root lacks): passes when the rehearsal fails naming it
#   tests/rehearsal.sh inside SRC          (run by the two above, in the chroot)
#
# Exit 77 (skipped) when not root (chroot and mounts need it). The root and the wheels are cached
# in GOLMPI_REHEARSAL_CACHE (default ~/.cache/golmpi/rehearsal), keyed by what they hold; a run
# works on an overlay (or a copy) of the cached root in a private mount namespace, so its mounts
# end with it, also when it is killed. Needs mmdebstrap (scripts/deps.sh --test) and, on a cold
# cache, Debian's registry and PyPI.
set -euo pipefail
SUITE=bookworm
DEBIAN_PKGS=(python3)
WHEELS=(h5py numpy cmake nvidia-nccl-cu13)
say() { echo "rehearsal: $*" >&2; }
fail() { echo "rehearsal: FAIL: $*" >&2; exit 1; }

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

# Outside: the cache --------------------------------------------------------------------------

cache_dir() { echo "${GOLMPI_REHEARSAL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/golmpi/rehearsal}"; }

# debian_root: the path of the cached minimal Debian root, built once per package list
debian_root() {
  local cache key dir tmp
  cache=$(cache_dir)
  key=$(printf '%s ' "$SUITE" minbase "${DEBIAN_PKGS[@]}" | sha256sum | cut -c1-12)
  dir=$cache/debian-$SUITE-$key
  if [[ ! -d $dir ]]; then
    command -v mmdebstrap >/dev/null || fail "no mmdebstrap (scripts/deps.sh --test installs it)"
    tmp=$(mktemp -d "$cache/tmp.XXXXXX")
    say "building the Debian $SUITE root (${DEBIAN_PKGS[*]}) with mmdebstrap, into $dir"
    mmdebstrap --quiet --mode=root --variant=minbase --include="$(IFS=,; echo "${DEBIAN_PKGS[*]}")" \
      "$SUITE" "$tmp/root" >&2 || { rm -rf --one-file-system "$tmp"; fail "mmdebstrap $SUITE"; }
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
  base=$(debian_root)
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

# rehearse SRC BUILD [PKG_LEFT_OUT]: the whole rehearsal; its exit status
rehearse() {
  local src build omit=${3:-} lower carry bins=() t0=$SECONDS
  src=$(cd "$1" && pwd) build=$(cd "$2" && pwd)
  [[ -x $build/golmpi ]] || fail "no golmpi in $build"
  bins=("$build/golmpi")
  [[ -x $build/tools/golmpi-render ]] && bins+=("$build/tools/golmpi-render")
  # the CUDA runtime golmpi loads here, for the stand-in; none in a CPU-only build
  REHEARSAL_CUDA=$(ldd "$build/golmpi" | awk '$1 ~ /^libcudart\.so/ && $3 ~ /^\// { print $3 }')
  export REHEARSAL_CUDA
  mkdir -p "$(cache_dir)"
  exec 9>"$(cache_dir)/lock"
  flock 9
  lower=$(stand_in)
  flock -u 9
  say "stand-in ready ($((SECONDS - t0)) s)"
  # global: the EXIT trap needs it after this function has returned
  work=$(mktemp -d "${TMPDIR:-/tmp}/rehearsal.XXXXXX")
  # the mounts live in their own namespace: nothing of them outlives it, so this removes files only
  trap 'rm -rf --one-file-system "$work"' EXIT
  carry=$work/carry
  # exactly the session's carry: the packages golmpi's binaries need, read from the binaries
  bash "$src/scripts/carry.sh" download "$carry" "${bins[@]}" ${omit:+--exclude "$omit"} 2>&1 |
    sed 's/^/rehearsal: [host] /' >&2
  [[ -f $carry/MANIFEST ]] || fail "carry.sh download wrote no MANIFEST"
  say "carried $(wc -l <"$carry/MANIFEST") packages ($((SECONDS - t0)) s)"
  mkdir -p "$work/upper" "$work/ovl" "$work/root"
  unshare --mount --propagation private bash -euo pipefail -c '
    lower=$1 work=$2 src=$3 build=$4 me=$5 root=$2/root
    cleanup() {
      for m in tmp dev/shm dev sys proc; do umount -l "$root/$m" 2>/dev/null || true; done
      umount -l "$root" 2>/dev/null || true
    }
    trap cleanup EXIT
    if ! mount -t overlay overlay -o "lowerdir=$lower,upperdir=$work/upper,workdir=$work/ovl" \
      "$root" 2>/dev/null; then
      cp -a "$lower/." "$root/"
    fi
    mkdir -p "$root/work/golmpi/build" "$root/carry"
    tar -C "$src" --exclude=./.git --exclude="./build*" --exclude="*.h5" --exclude="*.xmf" \
      --exclude=__pycache__ -cf - . | tar -C "$root/work/golmpi" -xf -
    # other tests run beside this one and write in the build tree (the fuzz corpora, scratch
    # outputs): those are not the build a GPU session carries, and a file they change or remove
    # while it is read is no error of the carry (GNU tar then exits 1, "some files differ")
    { tar -C "$build" --exclude="*.h5" --exclude="*.h5.part" --exclude="*.xmf" \
        --exclude=./Testing --exclude=./tests/fuzz --ignore-failed-read \
        --warning=no-file-changed --warning=no-file-removed -cf - . || (($? == 1)); } |
      tar -C "$root/work/golmpi/build" -xf -
    cp -a "$work/carry/." "$root/carry/"
    mount -t proc proc "$root/proc"
    mount --bind /sys "$root/sys"
    mount --bind /dev "$root/dev"
    mount -t tmpfs -o size=1g tmpfs "$root/dev/shm"
    mount -t tmpfs -o size=2g tmpfs "$root/tmp"
    chroot "$root" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
      HOME=/root TMPDIR=/tmp LANG=C.UTF-8 REHEARSAL_CUDA="$REHEARSAL_CUDA" bash /work/golmpi/tests/rehearsal.sh inside \
      /work/golmpi
  ' rehearsal "$lower" "$work" "$src" "$build" "$0" || return 1
  say "PASS in $((SECONDS - t0)) s"
}

(($# >= 2)) || { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
mode=$1
shift
case $mode in
inside) inside "$1" ;;
run | missing)
  (($# == 2)) || fail "$mode needs SRC and BUILD"
  if [[ $(id -u) != 0 ]]; then echo "SKIP: the rehearsal needs root (chroot, mount)"; exit 77; fi
  if [[ $mode == run ]]; then rehearse "$1" "$2"; echo PASS; exit 0; fi
  # the last library golmpi names that the bare root lacks, and the package that owns it here
  base=$(debian_root)
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
  rc=0
  (rehearse "$1" "$2" "$pkg") >"${TMPDIR:-/tmp}/rehearsal-missing.$$" 2>&1 || rc=$?
  out=$(cat "${TMPDIR:-/tmp}/rehearsal-missing.$$")
  rm -f "${TMPDIR:-/tmp}/rehearsal-missing.$$"
  echo "$out" | tail -30
  ((rc != 0)) || fail "the rehearsal passed without $pkg"
  grep -q "golmpi cannot load .*$lib" <<<"$out" || fail "no message naming $lib from ldd"
  grep -q "^gpu_check: .*$lib" <<<"$out" || fail "gpu_check.sh did not name $lib"
  echo "PASS: without $pkg the rehearsal fails naming $lib"
  ;;
*) fail "unknown mode $mode (run, missing)" ;;
esac
