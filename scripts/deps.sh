#!/bin/bash
# Install the Debian 12 packages golmpi needs, only those missing.
#   scripts/deps.sh          build and run: compiler, CMake, Open MPI, parallel HDF5
#   scripts/deps.sh --test   also what the tests use: h5py, numpy, Slurm, munge, libpng, golly,
#                            clang and its libFuzzer runtime (a Recommends) for the fuzz_* tests,
#                            mmdebstrap and pip for the bare-machine rehearsal (tests/rehearsal.sh)
set -euo pipefail
pkgs=(build-essential cmake pkg-config libopenmpi-dev openmpi-bin libhdf5-openmpi-dev hdf5-tools libcjson-dev)
if [[ ${1:-} == --test ]]; then
  pkgs+=(python3 python3-h5py python3-numpy slurm-wlm munge libpng-dev golly procps python3-matplotlib paraview python3-paraview xvfb xauth clang libclang-rt-14-dev mmdebstrap python3-pip)
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
