#!/bin/bash
# carry.sh: golmpi's run-time Debian packages, carried to a machine that has no package registry
# (a GPU machine lent with the NVIDIA driver, CUDA, python3 and nothing of ours).
#
#   scripts/carry.sh download DIR BINARY... [--exclude PKG]...
#       On the Debian 12 machine that built BINARY (build/golmpi build/tools/golmpi-render), with
#       apt: fetch into DIR, at the versions installed here, the .deb of every package that owns a
#       library the binaries load (ldd: every library, recursively), of Open MPI's launcher and
#       help files (openmpi-bin, openmpi-common: no binary shows them), and of every package that
#       owns a library which a program or plugin of a carried package loads (Open MPI's mca_*.so,
#       PMIx's, UCX's). Then write DIR/MANIFEST (package, version, file, why) and copy this script
#       there. The C library stays behind (the target has its own), and so do libraries no Debian
#       package owns (CUDA, NCCL under /usr/local or in a pip wheel): the target brings those.
#       --exclude PKG leaves a package out (one the target is known to have).
#       Every package goes by an exact version: the one installed here, or where the registry no
#       longer has it (an update or rebuild since), the one apt would fetch (its candidate).
#       With CARRY_DEB_CACHE=CACHE (a directory), a .deb already in CACHE for that name and
#       version, whose SHA256 is the one apt's index lists, is copied from there, not downloaded;
#       what is downloaded is added (under a temporary name, then renamed), replacing other
#       versions of its package. A second download with every package cached reads nothing from
#       the network.
#   scripts/carry.sh list BINARY... [--exclude PKG]...
#       print what download would fetch, and why, fetching nothing
#   scripts/carry.sh install DIR [ROOT]
#       On the target, as root: unpack every package of DIR/MANIFEST into ROOT (default /), keeping
#       every file already there; make mpirun and mpiexec; run ldconfig. Where ROOT is /, also
#       register with the loader the NCCL and CUDA runtime directories (pip wheels, /usr/local/cuda)
#       it does not know yet. Uses dpkg-deb where there is one, else python3 reads the .deb.
#
# Exit 0 on success, 1 when something failed (said why), 2 on bad arguments.
# After install: mpirun --allow-run-as-root --oversubscribe -n N build/golmpi ...; check with
# ldd build/golmpi. Debian 12's packages need glibc 2.36 or newer on the target.
set -euo pipefail
# ldconfig lives in sbin, which a user's PATH may lack
PATH=$PATH:/usr/sbin:/sbin
me=$(readlink -f "${BASH_SOURCE[0]}")
# No binary names these: the launcher and daemon (mpirun, orted) and Open MPI's help text and
# default parameters. Their own programs' libraries are found like any other's.
RUNTIME_PKGS=(openmpi-bin openmpi-common)
# The target's own C library serves; carrying Debian's would fight its loader.
SKIP_PKGS=(libc6)

usage() { sed -n '2,/^set -euo/p' "$me" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
die() { echo "carry: $1" >&2; exit "${2:-1}"; }
say() { echo "carry: $*" >&2; }

# Download side --------------------------------------------------------------------------------

# libs_of FILE...: "FILE<TAB>SONAME<TAB>PATH" per library ldd resolves; PATH "not found" when not
is_elf() {
  [[ -f $1 && ! -L $1 ]] && [[ $(head -c 4 "$1" 2>/dev/null | od -An -c | tr -d ' ') == '177ELF' ]]
}
libs_of() {
  local f
  for f in "$@"; do
    ldd "$f" 2>/dev/null | awk -v f="$f" '
      $2 == "=>" && $3 ~ /^\// { print f "\t" $1 "\t" $3 }
      $2 == "=>" && $3 == "not" { print f "\t" $1 "\tnot found" }'
  done
}

# owners PATH...: "PATH<TAB>PACKAGE" for the package owning each library (dpkg -S), trying the
# path, its target, and both with and without the /usr of a merged-/usr system
owners() {
  local p c
  declare -A cand=()
  for p in "$@"; do
    for c in "$p" "$(readlink -f "$p")"; do
      cand[$c]=$p cand[/usr$c]=$p
      [[ $c == /usr/* ]] && cand[${c#/usr}]=$p
    done
  done
  dpkg -S "${!cand[@]}" 2>/dev/null | awk '!/^diversion/' | while IFS= read -r line; do
    local pkgs=${line%%: /*} path=/${line#*: /}
    [[ -n ${cand[$path]:-} ]] || continue
    pkgs=${pkgs%%,*}
    printf '%s\t%s\n' "${cand[$path]}" "${pkgs%%:*}"
  done | sort -u -t $'\t' -k1,1
}

# pkg_elves PKG: the ELF programs and libraries a package installs
pkg_elves() {
  local f
  dpkg -L "$1" 2>/dev/null | while IFS= read -r f; do
    case $f in */bin/* | */sbin/* | */lib/* | */libexec/*) is_elf "$f" && echo "$f" ;; esac
  done
}

# resolve BINARY...: fills PKG_WHY (package -> why) with every package to carry; exits naming the
# libraries a given binary cannot load here
declare -A PKG_WHY=() EXCLUDE=()
resolve() {
  local b missing todo=() next=() f soname path pkg
  for b in "$@"; do
    [[ -f $b && -x $b ]] || die "no executable $b" 2
    missing=$(libs_of "$b" | awk -F'\t' '$3 == "not found" { print $2 }' | sort -u | tr '\n' ' ')
    [[ -z $missing ]] || die "$b cannot load ${missing% } on this machine: nothing to carry for it"
  done
  # the binaries first: a package is carried "for" the first file found to need it
  todo=("$@")
  for pkg in "${RUNTIME_PKGS[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" ||
      die "$pkg is not installed here (scripts/deps.sh installs it)"
    PKG_WHY[$pkg]="Open MPI's launcher, daemon and help files"
    mapfile -t -O "${#todo[@]}" todo < <(pkg_elves "$pkg")
  done
  declare -A scanned=() seen_lib=()
  while ((${#todo[@]})); do
    next=()
    declare -A lib_by=()
    while IFS=$'\t' read -r f soname path; do
      if [[ $path == "not found" ]]; then
        # a plugin for hardware or a library this machine lacks: Open MPI skips what cannot load
        say "note: $(basename "$f") (plugin or program of a carried package) cannot load $soname here"
        continue
      fi
      [[ -n ${seen_lib[$path]:-} ]] && continue
      seen_lib[$path]=1 lib_by[$path]="$soname ($(basename "$f"))"
    done < <(libs_of "${todo[@]}")
    for f in "${todo[@]}"; do scanned[$f]=1; done
    ((${#lib_by[@]})) || break
    declare -A owned=()
    while IFS=$'\t' read -r path pkg; do owned[$path]=$pkg; done < <(owners "${!lib_by[@]}")
    for path in "${!lib_by[@]}"; do
      pkg=${owned[$path]:-}
      if [[ -z $pkg ]]; then
        say "not carried: ${lib_by[$path]} is $path, which no Debian package owns (the target brings it)"
        continue
      fi
      [[ " ${SKIP_PKGS[*]} " == *" $pkg "* || -n ${EXCLUDE[$pkg]:-} || -n ${PKG_WHY[$pkg]:-} ]] &&
        continue
      PKG_WHY[$pkg]=${lib_by[$path]}
      while IFS= read -r f; do [[ -n ${scanned[$f]:-} ]] || next+=("$f"); done < <(pkg_elves "$pkg")
    done
    unset lib_by owned
    todo=("${next[@]}")
  done
}

download() {
  local dir=$1 cache=${CARRY_DEB_CACHE:-} pkg ver cand deb w hit name n=0 hits=0 want=() fetch=()
  local apt=(apt-get download -q)
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  rm -f "$dir"/*.deb "$dir/MANIFEST"
  if [[ -n $cache ]]; then
    mkdir -p "$cache"
    cache=$(cd "$cache" && pwd)
  fi
  # as root, apt fetches as _apt, who cannot write just any directory
  [[ $(id -u) == 0 ]] && apt+=(-o APT::Sandbox::User=root)
  local pkgs
  pkgs=$(printf '%s\n' "${!PKG_WHY[@]}" | sort)
  declare -A fetchable=() candidate=() sums=() from_cache=()
  # shellcheck disable=SC2086  # a list of names
  while read -r pkg ver; do fetchable[$pkg=$ver]=1; done < <(apt-cache madison $pkgs |
    awk -F' *[|] *' '$3 !~ /Sources/ { print $1, $2 }')
  # shellcheck disable=SC2086
  while read -r pkg ver; do candidate[$pkg]=$ver; done < <(apt-cache policy $pkgs |
    awk '/^[^ ].*:$/ { p = substr($0, 1, length($0) - 1) } $1 == "Candidate:" { print p, $2 }')
  for pkg in $pkgs; do
    ver=$(dpkg-query -W -f='${Version}' "$pkg")
    # the version this build runs with; where the registry no longer has it, the version apt
    # fetches for the bare name (its candidate). The registry keeps only the newest build of a
    # package in each suite, so a security or point-release update (1.20.1-2+deb12u3 to +deb12u5)
    # or a rebuild (1.47.0-2 to 1.47.0-2+b2) since this machine installed it leaves the installed
    # version nowhere to fetch. Naming the candidate's version keeps every package at an exact
    # version, which is what the cache is looked up by.
    if [[ -z ${fetchable[$pkg=$ver]:-} ]]; then
      cand=${candidate[$pkg]:-}
      [[ -n ${fetchable[$pkg=$cand]:-} ]] ||
        die "$pkg: neither its version here ($ver) nor a candidate (${cand:-none}) is in the registry"
      say "$pkg $ver is not in the registry any more: carrying its candidate $cand"
      ver=$cand
    fi
    want+=("$pkg=$ver")
  done
  if [[ -n $cache ]]; then
    # the SHA256 of each wanted .deb, from the registry's index apt keeps here (no network): a
    # cached file counts only when it is the very file apt would fetch
    while read -r w hit; do sums["$w $hit"]=1; done < <(apt-cache show "${want[@]}" |
      awk '$1 == "Package:" { p = $2 } $1 == "Version:" { v = $2 } $1 == "SHA256:" { print p "=" v, $2 }')
  fi
  for w in "${want[@]}"; do
    pkg=${w%%=*} ver=${w#*=} hit=""
    if [[ -n $cache ]]; then
      # apt's own file name: PKG_VERSION_ARCH.deb, the epoch's colon written %3a
      for deb in "$cache/${pkg}_${ver//:/%3a}_"*.deb; do
        [[ -f $deb && -n ${sums["$w $(sha256sum <"$deb" | cut -d' ' -f1)"]:-} ]] || continue
        hit=$deb
        break
      done
    fi
    if [[ -n $hit ]]; then
      cp "$hit" "$dir/"
      from_cache[${hit##*/}]=1
      hits=$((hits + 1))
    else
      fetch+=("$w")
    fi
  done
  if ((${#fetch[@]})); then
    (cd "$dir" && "${apt[@]}" "${fetch[@]}" >/dev/null) || die "apt-get download failed (see above)"
  fi
  for deb in "$dir"/*.deb; do
    name=${deb##*/}
    pkg=$(dpkg-deb -f "$deb" Package)
    printf '%s\t%s\t%s\t%s\n' "$pkg" "$(dpkg-deb -f "$deb" Version)" "$name" \
      "${PKG_WHY[$pkg]}" >>"$dir/MANIFEST"
    n=$((n + 1))
    if [[ -n $cache && -z ${from_cache[$name]:-} ]]; then
      # into the cache under a name no lookup matches, then renamed: a run stopped while copying
      # leaves no partial file under the name of a package; and one version per package is kept
      cp "$deb" "$cache/.$name.part.$$"
      mv -f "$cache/.$name.part.$$" "$cache/$name"
      for hit in "$cache/${pkg}_"*.deb; do [[ $hit == "$cache/$name" ]] || rm -f "$hit"; done
    fi
  done
  cp "$me" "$dir/carry.sh"
  local whence=""
  [[ -z $cache ]] || whence="; $hits from the cache $cache, $((n - hits)) from the registry"
  say "$n packages, $(du -sh "$dir" | cut -f1), in $dir (MANIFEST lists them and why)$whence"
}

# Install side ---------------------------------------------------------------------------------

# data_tar DEB: the .deb's files as a plain tar stream
data_tar() {
  if command -v dpkg-deb >/dev/null; then
    dpkg-deb --fsys-tarfile "$1"
    return
  fi
  python3 - "$1" <<'PY'
import bz2, gzip, lzma, sys
# a .deb is an ar archive: "!<arch>\n", then 60-byte headers (name 16, size at 48..58)
with open(sys.argv[1], "rb") as f:
    data = f.read()
assert data[:8] == b"!<arch>\n", "not a .deb"
pos = 8
while pos + 60 <= len(data):
    name, size = data[pos:pos + 16].strip().rstrip(b"/"), int(data[pos + 48:pos + 58])
    body = data[pos + 60:pos + 60 + size]
    pos += 60 + size + (size & 1)
    if name.startswith(b"data.tar"):
        ext = name[len(b"data.tar"):]
        unpack = {b"": bytes, b".xz": lzma.decompress, b".gz": gzip.decompress,
                  b".bz2": bz2.decompress}.get(ext)
        if unpack is None:
            sys.exit(f"{sys.argv[1]}: {name.decode()} needs dpkg-deb")
        sys.stdout.buffer.write(unpack(body))
        break
else:
    sys.exit(f"{sys.argv[1]}: no data.tar member")
PY
}

# register_gpu_libs: NCCL and the CUDA runtime where the loader does not look yet (pip wheels put
# them under site-packages/nvidia; a toolkit under /usr/local/cuda)
register_gpu_libs() {
  local lib dir dirs=() py conf=/etc/ld.so.conf.d/golmpi-carry.conf
  for lib in libnccl.so.2 libcudart.so; do
    ldconfig -p | grep -q "[[:space:]]$lib" && continue
    dir=""
    for py in python3 /usr/bin/python3; do
      command -v "$py" >/dev/null || continue
      dir=$("$py" - "$lib" 2>/dev/null <<'PY' || true
import glob, importlib, sys
for name in ("nvidia.nccl", "nvidia.cuda_runtime", "nvidia.cu13"):
    try:
        for p in importlib.import_module(name).__path__:
            for hit in glob.glob(f"{p}/lib/{sys.argv[1]}*"):
                print(hit.rsplit("/", 1)[0]); sys.exit()
    except ImportError:
        pass
PY
)
      [[ -n $dir ]] && break
    done
    if [[ -z $dir ]]; then
      dir=$(ls -d /usr/local/cuda/lib64/"$lib"* /usr/local/cuda/lib/"$lib"* \
            /usr/local/cuda-*/targets/*/lib/"$lib"* 2>/dev/null | head -1 || true)
      dir=${dir%/*}
    fi
    if [[ -n $dir ]]; then
      dirs+=("$dir")
      say "$lib: registered $dir with the loader"
    else
      say "warning: no $lib on this machine (pip install nvidia-nccl-cu13, or a CUDA toolkit)"
    fi
  done
  if ((${#dirs[@]})); then
    printf '%s\n' "${dirs[@]}" >>"$conf"
    ldconfig
  fi
}

install_into() {
  local dir=$1 root=${2:-/} pkg ver file why missing=() n=0
  [[ -f $dir/MANIFEST ]] || die "$dir has no MANIFEST: not a directory of carry.sh download" 2
  [[ -d $root && -w $root ]] || die "cannot write into $root (run as root)" 2
  while IFS=$'\t' read -r pkg ver file why; do
    [[ -f $dir/$file ]] || missing+=("$pkg $ver ($file), which carries $why")
  done <"$dir/MANIFEST"
  if ((${#missing[@]})); then
    printf 'carry: %s lacks %s\n' "$dir" "${missing[@]}" >&2
    exit 1
  fi
  if [[ $root == / ]]; then
    local glibc
    glibc=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{ print $2 }')
    [[ -z $glibc ]] || printf '2.36\n%s\n' "$glibc" | sort -CV ||
      say "warning: glibc $glibc here; Debian 12's libraries need 2.36 or newer"
  fi
  while IFS=$'\t' read -r pkg ver file why; do
    # --skip-old-files: what the machine has stays as it is; --keep-directory-symlink: merged-/usr
    # links such as /lib -> usr/lib stay links
    data_tar "$dir/$file" | tar -x -C "$root" --skip-old-files --keep-directory-symlink ||
      die "unpacking $file into $root failed"
    n=$((n + 1))
  done <"$dir/MANIFEST"
  # Debian makes mpirun and mpiexec with update-alternatives, which unpacking does not run
  local cmd
  for cmd in mpirun mpiexec; do
    [[ -e $root/usr/bin/$cmd || -L $root/usr/bin/$cmd ]] || ln -s "$cmd.openmpi" "$root/usr/bin/$cmd"
  done
  # Open MPI wants an ssh or rsh agent even for one node; one that is never run serves
  local params=$root/etc/openmpi/openmpi-mca-params.conf
  if [[ -f $params ]] && ! grep -q '^plm_rsh_agent' "$params" &&
     ! command -v ssh >/dev/null && ! command -v rsh >/dev/null; then
    printf '\n# carry.sh: no ssh here; single-node launches never call it\nplm_rsh_agent = false\n' \
      >>"$params"
  fi
  if [[ $root == / ]]; then
    ldconfig
    register_gpu_libs
  else
    ldconfig -r "$root"
  fi
  say "installed $n packages from $dir into $root"
}

# Main -----------------------------------------------------------------------------------------

(($# >= 1)) || usage
verb=$1
shift
case $verb in
download | list)
  args=()
  while (($#)); do
    case $1 in
    --exclude) [[ $# -ge 2 ]] || die "--exclude needs a package" 2; EXCLUDE[$2]=1; shift ;;
    -h | --help) usage ;;
    -*) die "unknown option $1" 2 ;;
    *) args+=("$1") ;;
    esac
    shift
  done
  if [[ $verb == download ]]; then
    ((${#args[@]} >= 2)) || die "download needs DIR and at least one BINARY" 2
    dir=${args[0]}
    resolve "${args[@]:1}"
    download "$dir"
  else
    ((${#args[@]} >= 1)) || die "list needs at least one BINARY" 2
    resolve "${args[@]}"
    for pkg in $(printf '%s\n' "${!PKG_WHY[@]}" | sort); do
      printf '%s\t%s\n' "$pkg" "${PKG_WHY[$pkg]}"
    done
  fi
  ;;
install)
  (($# >= 1 && $# <= 2)) || die "install needs DIR and optionally ROOT" 2
  install_into "$@"
  ;;
-h | --help) usage ;;
*) die "unknown command '$verb' (download, list, install)" 2 ;;
esac
