# Sourced by the scripts: the CUDA toolkit on PATH when present, and mpirun flags for root.
if ! command -v nvcc >/dev/null && [[ -x /usr/local/cuda/bin/nvcc ]]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
# CUDA is built when the toolkit is there; GOLMPI_CMAKE_ARGS adds or overrides options
cuda_flag=-DGOLMPI_ENABLE_CUDA=OFF
command -v nvcc >/dev/null && cuda_flag=-DGOLMPI_ENABLE_CUDA=ON
MPIRUN=(mpirun)
[[ $(id -u) == 0 ]] && MPIRUN+=(--allow-run-as-root)
# more ranks than cores is fine for a laptop run or a test
MPIRUN+=(--oversubscribe)
# The job scripts find their library (jobs/golmpi_job.sh) through GOLMPI_SHARE; sbatch passes it on.
GOLMPI_SHARE=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export GOLMPI_SHARE
