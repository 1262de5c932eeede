# The GPU session rehearsed on a bare Debian 12 root without a GPU (tests/rehearsal.sh): the
# project's carry script (scripts/carry.sh) carries the packages golmpi's binaries load, and the
# root runs ldd, gpu_check.sh and 2-rank CPU runs checked by its own h5py. rehearsal_missing_package
# leaves one package out and passes only when the rehearsal fails naming the missing library.
# Root only (chroot, mounts), else skipped. Cold (mmdebstrap, pip wheels into the cache of
# GOLMPI_REHEARSAL_CACHE or ~/.cache/golmpi/rehearsal): about 2 minutes; cached: about 30 s each.
# The two share the cache and the registry: one at a time.
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

# A new user's Debian 12 machine (tests/rehearsal.sh fresh): a bare minbase root with sudo, a user
# who is not root, the source tree; as that user the README's quick start and Gosper gun example,
# read from the README and run as printed (its main job included: mpirun -n 4 golmpi --size 16384,
# 1000 generations, 1.3 GiB), then scripts/test.sh's first steps: scripts/deps.sh --test, every
# command and module of scripts/deps.txt found, and build/ configured with nothing reported missing.
# The packages come from Debian's registry (never cached). Root only, else skipped. The README's
# part takes about 1 minute (the main job about 12 s of it), scripts/deps.sh --test most of the
# rest (docs/BUILD.md has the figures); the bare root is cached beside the others.
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
