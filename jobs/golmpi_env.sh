# Installed as <prefix>/share/golmpi/env.sh: `source <prefix>/share/golmpi/env.sh` puts golmpi on
# PATH and exports GOLMPI_SHARE, where the job scripts find their library (jobs/golmpi_job.sh);
# sbatch passes it on to the job.
GOLMPI_SHARE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export GOLMPI_SHARE
PATH=$(cd "$GOLMPI_SHARE/../../bin" && pwd):$PATH
