# The GPU session rehearsed on a bare Debian 12 root without a GPU (tests/rehearsal.sh): the
# project's carry script (scripts/carry.sh) carries the packages golmpi's binaries load, and the
# root runs ldd, gpu_check.sh and 2-rank CPU runs checked by its own h5py. rehearsal_missing_package
# leaves one package out and passes only when the rehearsal fails naming the missing library.
# Root only (chroot, mounts), else skipped. Cold (mmdebstrap, pip wheels into the cache of
# GOLMPI_REHEARSAL_CACHE or ~/.cache/golmpi/rehearsal): about 2 minutes; cached: about 30 s each.
# The carried packages come from the cache's carry-debs-KEY where it holds them (scripts/carry.sh's
# CARRY_DEB_CACHE), the rest from the registry into it. They share the cache: one at a time.
foreach(mode run missing)
  set(name rehearsal_bare_machine)
  if(mode STREQUAL "missing")
    set(name rehearsal_missing_package)
  endif()
  add_test(NAME ${name}
    COMMAND bash ${GOLMPI_TEST_DIR}/rehearsal.sh ${mode} ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR})
  set_tests_properties(${name} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 900
    RESOURCE_LOCK golmpi_rehearsal LABELS rehearsal)
endforeach()

# The carry's package cache (rehearsal.sh carry-offline): scripts/carry.sh download of the build's
# binaries with the rehearsal's carry-debs-KEY cache (the one run and missing use), once with the
# network, filling what the cache lacks, then in a network namespace with no network, which must
# write the same MANIFEST and files; and with an empty cache there it must fail, so the namespace
# keeps the registry out. Root only (unshare --net), else skipped. About 30 s cold or cached
# (docs/BUILD.md), most of it apt's failing lookups in the last step; the limit is ten times that.
add_test(NAME rehearsal_carry_offline
  COMMAND bash ${GOLMPI_TEST_DIR}/rehearsal.sh carry-offline ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR})
set_tests_properties(rehearsal_carry_offline PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300
  RESOURCE_LOCK golmpi_rehearsal LABELS rehearsal)

# A new user's Debian 12 machine (tests/rehearsal.sh fresh): a bare minbase root with sudo, a user
# who is not root, the source tree; as that user the README's quick start and Gosper gun example,
# read from the README and run as printed (its main job included: mpirun -n 4 golmpi --size 16384,
# 1000 generations, 1.3 GiB), the quick start's last line, bash scripts/test.sh, in the lighter
# mode the README names (GOLMPI_TEST_QUICK=1: scripts/deps.sh --test, build/ with nothing left
# unregistered, the quick tests, "test.sh: PASS"), then every package, command and module of
# scripts/deps.txt found. Its Debian packages are cached under the rehearsal's cache, keyed by
# scripts/deps.txt: a run on a filled cache has no network at all. Root only, else skipped.
# docs/BUILD.md has the figures. scripts/test.sh runs these tests as a stage of their own, in the
# background beside its sim and sanitize stages, at a lower priority than their tests.
add_test(NAME rehearsal_fresh_machine
  COMMAND bash ${GOLMPI_TEST_DIR}/rehearsal.sh fresh ${PROJECT_SOURCE_DIR})
# ... and it fails where it must: on a copy of the tree whose tests/halo.cmake REQUIRES Python3 it
# stops at the quick start's first line with CMake's "Could NOT find Python3": the run packages
# only, no build, no test packages.
add_test(NAME rehearsal_fresh_required
  COMMAND bash ${GOLMPI_TEST_DIR}/rehearsal.sh fresh-required ${PROJECT_SOURCE_DIR})
# Limits of twice the longest run measured (docs/BUILD.md: fresh 825 s and 1762 s, most of it
# scripts/deps.sh --test fetching from Debian's registry; fresh-required 128 s).
set_tests_properties(rehearsal_fresh_machine PROPERTIES
  SKIP_RETURN_CODE 77 TIMEOUT 3600 RESOURCE_LOCK golmpi_rehearsal LABELS rehearsal)
set_tests_properties(rehearsal_fresh_required PROPERTIES
  SKIP_RETURN_CODE 77 TIMEOUT 900 RESOURCE_LOCK golmpi_rehearsal LABELS rehearsal)

# The fresh rehearsal's README checks alone (rehearsal.sh readme, no Debian root, no root): the
# README as it is passes; a copy that names no lighter run of scripts/test.sh, and one whose quick
# start ends otherwise, are refused with their reason. Under a second; in the main stage.
add_test(NAME rehearsal_readme_refusals
  COMMAND bash ${GOLMPI_TEST_DIR}/test_rehearsal_readme.sh ${PROJECT_SOURCE_DIR})
set_tests_properties(rehearsal_readme_refusals PROPERTIES TIMEOUT 60)
