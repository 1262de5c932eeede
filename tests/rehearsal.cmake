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

# A new user's Debian 12 machine (tests/rehearsal.sh fresh): a bare minbase root, the source tree,
# scripts/deps.sh and scripts/deps.sh --test from Debian's registry (never cached), then every
# command and module of scripts/deps.txt found and golmpi and its tests configured with nothing
# reported missing. Root only, else skipped. About 3 minutes (the packages of the tests: ParaView,
# clang, Slurm...); the bare root is cached beside the others.
add_test(NAME rehearsal_fresh_machine
  COMMAND bash ${GOLMPI_TEST_DIR}/rehearsal.sh fresh ${PROJECT_SOURCE_DIR})
set_tests_properties(rehearsal_fresh_machine PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 900
  RESOURCE_LOCK golmpi_rehearsal LABELS rehearsal)
