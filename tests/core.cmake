# Core: the rule arithmetic, the decomposition, and the whole program against a naive reference.
foreach(t word decomp depth random_start cuda_choices cpu_strip)
  add_executable(test_${t} ${GOLMPI_TEST_DIR}/test_${t}.c)
  target_link_libraries(test_${t} PRIVATE golmpi_core)
  add_test(NAME unit_${t} COMMAND test_${t})
endforeach()

# The MPS probe against stand-in sockets (ours, another user's, a full queue, a killed daemon's
# file) and the GPU keys that count MIG slices apart (core/gpu_share.h).
add_executable(test_gpu_share ${GOLMPI_TEST_DIR}/test_gpu_share.c)
target_link_libraries(test_gpu_share PRIVATE golmpi_core)
add_test(NAME unit_gpu_share COMMAND test_gpu_share)
set_tests_properties(unit_gpu_share PROPERTIES TIMEOUT 60)

# integration.py runs golmpi under mpiexec itself; the rank count is part of each case.
set(GOLMPI_INTEGRATION_CASES
  ref_77x23_p1_torus_B3S23 ref_77x23_p2_dead_B3S23 ref_77x23_p3_torus_B36S23
  ref_77x23_p4_dead_B36S23 ref_130x67_p3_torus_B3S23_packed ref_130x67_p4_dead_B36S23_packed
  ref_64x9_p4_torus_B3S23 ref_1x5_p2_torus_B3S23 ref_200x4_p4_dead_B2S ref_65x7_p2_torus_B0S8
  ref_101x31_p4_dead_B0S8 ref_67x29_p3_dead_B36S23 ref_131x26_p2_torus_B0S23
  ref_97x530_p4_dead_B3S23 ref_70x1100_p1_torus_B36S23
  ref_2241x37_p2_dead_B36S23 ref_4133x24_p3_torus_B3S23
  random_start across restart pattern r_pentomino pieces transfers)
# TIMEOUT: over twice the longest measured, cuda_across's 315 s on the simulated GPU (test.sh's
# sim stage on 2 cores with the rehearsals beside it at the same priority)
function(golmpi_integration_tests backend)
  foreach(c ${GOLMPI_INTEGRATION_CASES})
    golmpi_integration_test(${backend}_${c} ${backend} ${c} SKIP TIMEOUT 700)
  endforeach()
endfunction()
golmpi_integration_tests(cpu)

# Deep halos (core/depth.h): the frames must not depend on --halo-depth. The cases above run at
# the default, auto, which is 1 on short slabs (one row a rank included) and deeper on the tall
# ones (97x530 on 4 ranks: 4; 70x1100 on 1 rank: 16, exchanging with itself). Each explicit depth
# runs the cases whose every slab holds that many rows: odd widths, 1 to 4 ranks, both boundaries,
# B3/S23, B36/S23, B0 rules (cells born in the open, never past a dead edge), restart, calls cut
# unlike the other ranks' (pieces), frames falling inside an exchange cycle (every 4 or 3
# generations against depths 3, 5 and 16).
set(GOLMPI_DEPTH_CASES_5
  ref_77x23_p2_dead_B3S23 ref_77x23_p3_torus_B36S23 ref_77x23_p4_dead_B36S23
  ref_130x67_p3_torus_B3S23_packed ref_101x31_p4_dead_B0S8 ref_67x29_p3_dead_B36S23
  ref_131x26_p2_torus_B0S23 ref_2241x37_p2_dead_B36S23 restart across pieces)
set(GOLMPI_DEPTH_CASES_16
  ref_77x23_p1_torus_B3S23 ref_130x67_p3_torus_B3S23_packed ref_97x530_p4_dead_B3S23
  ref_70x1100_p1_torus_B36S23)
function(golmpi_depth_tests depth)
  foreach(c ${ARGN})
    golmpi_integration_test(cpu_depth${depth}_${c} cpu ${c} DEPTH ${depth} TIMEOUT 600)
  endforeach()
endfunction()
golmpi_depth_tests(1 ref_97x530_p4_dead_B3S23 ref_70x1100_p1_torus_B36S23 pieces)
golmpi_depth_tests(2 ${GOLMPI_DEPTH_CASES_5} ref_64x9_p4_torus_B3S23 ref_1x5_p2_torus_B3S23)
golmpi_depth_tests(3 ${GOLMPI_DEPTH_CASES_5})
golmpi_depth_tests(5 ${GOLMPI_DEPTH_CASES_5})
golmpi_depth_tests(16 ${GOLMPI_DEPTH_CASES_16})
# The CPU step's other builds (cpu/cpu_strip.c once per instruction set): the cases above run
# the fastest this CPU has, these the others through GOLMPI_CPU_ISA, on rows wide enough for the
# strips of four vectors (36 and 65 words, the interior no multiple of a strip). Skipped where the
# CPU lacks the set (integration.py: golmpi refuses it with exit 2 and /proc/cpuinfo agrees).
foreach(isa avx2 base)
  foreach(c ref_2241x37_p2_dead_B36S23 ref_4133x24_p3_torus_B3S23)
    golmpi_integration_test(cpu_isa_${isa}_${c} cpu ${c} SKIP TIMEOUT 600
      ENV GOLMPI_CPU_ISA=${isa})
  endforeach()
endforeach()

# Many tiles and their seams (cpu/backend_cpu.c): the grids above fit one tile a pass, so
# GOLMPI_CPU_TILE_ROWS (a debug setting) cuts the tall slabs into tiles of 11 or 37 rows, on one
# thread (every seam right after its second tile) and on three (seams between the threads' runs
# too); restart at depth 3 in tiles of 6 rows.
foreach(threads 1 3)
  foreach(c "5;11;ref_97x530_p4_dead_B3S23" "16;37;ref_70x1100_p1_torus_B36S23" "3;6;restart")
    list(GET c 0 depth)
    list(GET c 1 tile)
    list(GET c 2 case)
    golmpi_integration_test(cpu_tiles${tile}_t${threads}_depth${depth}_${case} cpu ${case}
      DEPTH ${depth} TIMEOUT 600 ENV OMP_NUM_THREADS=${threads} GOLMPI_CPU_TILE_ROWS=${tile})
  endforeach()
endforeach()

golmpi_integration_test(cpu_depth_refused cpu depth_refused)
if(GOLMPI_CUDA_BACKEND)
  # one GPU serves every rank in CI-like setups: --halo auto picks NCCL only for distinct GPUs
  golmpi_integration_tests(cuda)
  # The CUDA backend at explicit depths (skipped without a GPU): 1, the one-generation kernels;
  # 2, 3 and 5, one pass of the multi-generation kernel a cycle; 9, 16 and 64, cycles of passes of
  # 8 generations (GOL_DEEP_GENS_MAX) and the rest. The same cases and reference as on the CPU.
  function(golmpi_cuda_depth_tests depth)
    foreach(c ${ARGN})
      golmpi_integration_test(cuda_depth${depth}_${c} cuda ${c} DEPTH ${depth} SKIP TIMEOUT 600
        LABELS gpu)
    endforeach()
  endfunction()
  golmpi_cuda_depth_tests(1 ref_97x530_p4_dead_B3S23 ref_70x1100_p1_torus_B36S23 pieces)
  foreach(depth 2 3 5)
    golmpi_cuda_depth_tests(${depth} ${GOLMPI_DEPTH_CASES_5})
  endforeach()
  golmpi_cuda_depth_tests(9 ${GOLMPI_DEPTH_CASES_16})
  golmpi_cuda_depth_tests(16 ${GOLMPI_DEPTH_CASES_16})
  golmpi_cuda_depth_tests(64 ref_97x530_p4_dead_B3S23 ref_70x1100_p1_torus_B36S23)
endif()

golmpi_test(backend_auto PYTHON PROCESSORS 2 ENV OMP_NUM_THREADS=1
  COMMAND ${GOLMPI_TEST_DIR}/test_backend_auto.py "${GOLMPI_MPIEXEC_LINE}" $<TARGET_FILE:golmpi>)

# The random start made in place by the backends (backend_init_random) against the host's rows,
# halo rows included, on 1 and 3 ranks; with CUDA also the kernel's emulation (cuda/init_cuda.cu).
add_executable(test_init_random ${GOLMPI_TEST_DIR}/test_init_random.c)
target_link_libraries(test_init_random PRIVATE golmpi_core)
foreach(n 1 3)
  golmpi_mpi_test(NAME unit_init_random_np${n} RANKS ${n} COMMAND $<TARGET_FILE:test_init_random>)
endforeach()
