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
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# Debian installs the CUDA toolkit outside PATH; CMake finds nvcc through PATH or CUDACXX
if ! command -v nvcc >/dev/null && [[ -x /usr/local/cuda/bin/nvcc ]]; then
  echo "note: add /usr/local/cuda/bin to PATH (the scripts do it for themselves)"
fi
