#!/bin/bash
# scripts/deps.sh while another process holds apt's and dpkg's locks (as unattended-upgrades does
# on a fresh machine): it must say that it waits, wait, and then succeed. dpkg-query is shadowed
# so that one installed package (pkg-config) looks missing and apt-get really runs (update, then an
# install that finds nothing to do). Root only (77 otherwise); about 10 s plus apt-get update.
set -euo pipefail
[[ $(id -u) == 0 ]] || { echo "skip: needs root to hold apt's locks"; exit 77; }
src=$1 python=${2:-python3}
tmp=$(mktemp -d /tmp/golmpi-deps.XXXXXX)
holder=""
cleanup() { [[ -z $holder ]] || kill "$holder" 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
cat >"$tmp/dpkg-query" <<'Q'
#!/bin/bash
[[ ${!#} == pkg-config ]] && exit 1
exec /usr/bin/dpkg-query "$@"
Q
chmod +x "$tmp/dpkg-query"
# the locks apt takes (fcntl), held for 6 s
"$python" - "$tmp/locked" <<'P' &
import fcntl, os, sys, time
fds = []
for p in ("/var/lib/dpkg/lock-frontend", "/var/lib/dpkg/lock", "/var/lib/apt/lists/lock"):
    fd = os.open(p, os.O_RDWR | os.O_CREAT, 0o640)
    fcntl.lockf(fd, fcntl.LOCK_EX)
    fds.append(fd)
open(sys.argv[1], "w").close()
time.sleep(6)
P
holder=$!
for _ in $(seq 100); do [[ -e $tmp/locked ]] && break; sleep 0.1; done
[[ -e $tmp/locked ]] || { echo "FAIL: could not take apt's locks"; exit 1; }
start=$SECONDS
rc=0
PATH="$tmp:$PATH" GOLMPI_APT_WAIT=60 timeout 300 bash ${GOLMPI_DEPS_TRACE:+-x} "$src/scripts/deps.sh" >"$tmp/out" 2>&1 || rc=$?
cat "$tmp/out"
[[ $rc == 0 ]] || { echo "FAIL: scripts/deps.sh exited $rc while the apt lock was held"; exit 1; }
grep -q "^waiting for another apt/dpkg" "$tmp/out" || { echo "FAIL: deps.sh did not say it waits"; exit 1; }
echo "PASS: deps.sh waited $((SECONDS - start)) s for the lock, said so, and succeeded"
