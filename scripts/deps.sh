#!/bin/bash
# Install the Debian 12 packages golmpi needs, only those missing. scripts/deps.txt lists them.
#   scripts/deps.sh          build and run: compiler, CMake, Open MPI, parallel HDF5, cJSON, libpng
#                            (golmpi-render), man (golmpi's man page)
#   scripts/deps.sh --test   also everything the tests use: h5py, numpy, Slurm, munge, iproute2
#                            (the namespace cluster), groff, ParaView, xvfb, clang and libFuzzer,
#                            mmdebstrap and pip (the rehearsals, tests/rehearsal.sh), ...
#   scripts/deps.sh --list [--test]   print the packages, install nothing
set -euo pipefail
# one line naming the command that stopped the script
trap 'echo "deps.sh: FAILED: $BASH_COMMAND (exit $?)" >&2' ERR
list=$(dirname "$0")/deps.txt
want="run" print=0
for arg in "$@"; do
  case $arg in
  --test) want="run|test" ;;
  --list) print=1 ;;
  *) echo "deps.sh: unknown option $arg (--test, --list)" >&2; exit 2 ;;
  esac
done
mapfile -t pkgs < <(awk -v want="^($want)\$" '!/^#/ && $1 != "-" && $2 ~ want { print $1 }' "$list")
((${#pkgs[@]})) || { echo "deps.sh: no packages read from $list" >&2; exit 1; }
if ((print)); then
  printf '%s\n' "${pkgs[@]}"
  exit 0
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=
  [[ $(id -u) == 0 ]] || sudo=sudo
  echo "installing: ${missing[*]}"
  # Another apt or dpkg (unattended-upgrades on a fresh machine) may hold the lock: wait for it,
  # up to GOLMPI_APT_WAIT seconds, saying so, instead of failing at once. DPkg::Lock::Timeout
  # covers dpkg's lock; apt-get update ignores it for the lists lock, hence the retry.
  wait_s=${GOLMPI_APT_WAIT:-600}
  apt=($sudo env DEBIAN_FRONTEND=noninteractive apt-get -o "DPkg::Lock::Timeout=$wait_s")
  apt_waiting() {
    local out said=0 start=$SECONDS
    until out=$("${apt[@]}" "$@" 2>&1); do
      if ! grep -q "Could not get lock" <<<"$out" || ((SECONDS - start >= wait_s)); then
        printf '%s\n' "$out" >&2
        return 1
      fi
      ((said)) || echo "waiting for another apt/dpkg to finish (up to $wait_s s):" \
        "$(grep -m1 -o 'held by process .*' <<<"$out")"
      said=1
      sleep 3
    done
    [[ -z $out ]] || printf '%s\n' "$out"
  }
  apt_waiting update -qq
  apt_waiting install -y -qq --no-install-recommends "${missing[@]}"
fi
# Debian installs the CUDA toolkit outside PATH; CMake finds nvcc through PATH or CUDACXX
if ! command -v nvcc >/dev/null && [[ -x /usr/local/cuda/bin/nvcc ]]; then
  echo "note: add /usr/local/cuda/bin to PATH (the scripts do it for themselves)"
fi
