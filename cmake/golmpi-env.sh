# Put golmpi on PATH and its man page on MANPATH, and name the installed patterns, job scripts and
# plotting tools (GOLMPI_SHARE=<prefix>/share/golmpi):  source <prefix>/share/golmpi/env.sh
# (bash, zsh, ksh). The prefix is found from this file's own place, so the tree may be moved.
if [ -n "${BASH_SOURCE:-}" ]; then golmpi_env_here=${BASH_SOURCE[0]}
elif [ -n "${ZSH_VERSION:-}" ]; then eval 'golmpi_env_here=${(%):-%x}'
else golmpi_env_here=$0; fi
golmpi_prefix=$(cd "$(dirname "$golmpi_env_here")/../.." && pwd)
case ":$PATH:" in *":$golmpi_prefix/bin:"*) ;; *) PATH="$golmpi_prefix/bin:$PATH" ;; esac
case ":${MANPATH:-}:" in *":$golmpi_prefix/share/man:"*) ;;
  *) MANPATH="$golmpi_prefix/share/man:${MANPATH:-}" ;; esac
GOLMPI_SHARE=$golmpi_prefix/share/golmpi
export PATH MANPATH GOLMPI_SHARE
unset golmpi_env_here golmpi_prefix
