# The simulated GPU's own tests (GOLMPI_CUDA_SIM=ON builds; docs/GPU.md). Its runs of the CUDA
# backend are the CUDA tests of the other areas, under schedule seeds here; this area adds the
# proof that it catches what it must: golmpi built with one ordering of its CUDA path taken out
# (a mutant: one source file rewritten by cudasim/mutate.py, linked before golmpi_core so that its
# object replaces the original) fails, and golmpi passes, in the same run (test_mutation.py).

# The simulator's strict rules against the runtime, call by call (cudasim/gpu_rules.cu): in the
# CUDA build against NVIDIA's runtime on a real GPU (exit 77 without one), in the simulated build
# against the simulator (cudasim_gpu_rules below), one table for both.
if(GOLMPI_ENABLE_CUDA)
  find_package(Threads REQUIRED)
  add_executable(test_gpu_rules ${GOLMPI_TEST_DIR}/cudasim/gpu_rules.cu)
  target_link_libraries(test_gpu_rules PRIVATE CUDA::cudart Threads::Threads)
  add_test(NAME cuda_sim_rules COMMAND test_gpu_rules)
  set_tests_properties(cuda_sim_rules PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 120 LABELS gpu)
endif()

if(NOT GOLMPI_CUDA_SIM)
  return()
endif()

# golmpi_mutant(<name> <source> <find> <replace> [<find> <replace>...]): golmpi_mut_<name>.
# Python writes the mutant's source at build time: without a Python (tests/helpers.cmake looked
# for it) there is no mutant, and golmpi_mutation_test's golmpi_test registers none of its tests.
function(golmpi_mutant name source)
  if(NOT Python3_EXECUTABLE)
    return()
  endif()
  set(out ${CMAKE_CURRENT_BINARY_DIR}/mutants/${name}/${source})
  add_custom_command(OUTPUT ${out}
    COMMAND ${Python3_EXECUTABLE} ${GOLMPI_TEST_DIR}/cudasim/mutate.py
            ${PROJECT_SOURCE_DIR}/${source} ${out} ${ARGN}
    DEPENDS ${PROJECT_SOURCE_DIR}/${source} ${GOLMPI_TEST_DIR}/cudasim/mutate.py VERBATIM)
  add_executable(golmpi_mut_${name} ${PROJECT_SOURCE_DIR}/src/main.c ${out})
  target_link_libraries(golmpi_mut_${name} PRIVATE golmpi_core)
  target_compile_options(golmpi_mut_${name} PRIVATE -w)
endfunction()

# golmpi_mutation_test(<name> <mutant> RANKS n [SEEDS s,...] [EVERY_SEED] ARGS <golmpi args...>)
# EVERY_SEED: the mutant must fail under every seed, not only one (test_mutation.py).
function(golmpi_mutation_test name mutant)
  cmake_parse_arguments(T "EVERY_SEED" "RANKS;SEEDS" "ARGS" ${ARGN})
  if(NOT T_SEEDS)
    set(T_SEEDS 1,2)
  endif()
  set(every "")
  if(T_EVERY_SEED)
    set(every --every-seed)
  endif()
  golmpi_test(cudasim_mutation_${name} PYTHON ONE_THREAD PROCESSORS 2 TIMEOUT 600 LABELS "gpu;sim"
    COMMAND ${GOLMPI_TEST_DIR}/test_mutation.py --golmpi $<TARGET_FILE:golmpi>
            --mutant $<TARGET_FILE:golmpi_mut_${mutant}> --ranks ${T_RANKS} --seeds ${T_SEEDS}
            ${every} ${T_ARGS} --mpiexec ${MPIEXEC_EXECUTABLE} ${GOLMPI_MPIEXEC_FLAGS})
endfunction()

# The simulator against the semantics it claims: order, timing, memory, capture rules, and what it
# must report (a race the schedule hides, a wait on a later record, a host dereference of device
# memory, a pinned buffer read before the host saw its copy done); graphs replayed, with pinned
# copies read at each replay, and a graph launch taking one entry of the bounded launch queue;
# NCCL's duplicate-GPU refusal and blocking send on two ranks, a captured send against an eager
# receive, teardown (finalize collective, destroy after it local), a communicator in progress,
# the collective abort, two communicators' order on the SMs. The CUDA rules a GPU also checks
# (the pageable copy, capture, destroy) are cudasim_gpu_rules' below.
add_executable(test_sim ${GOLMPI_TEST_DIR}/cudasim/test_sim.c)
target_link_libraries(test_sim PRIVATE cudasim MPI::MPI_C)
foreach(c ordered_by_event timing memory capture_rules race_two_streams race_later_record
          host_reads_device host_reads_copy_in_flight graph_replays graph_one_entry queue_bound)
  add_test(NAME cudasim_${c} COMMAND test_sim ${c})
  set_tests_properties(cudasim_${c} PROPERTIES TIMEOUT 60 LABELS "gpu;sim")
endforeach()
# The graph cases again under AddressSanitizer, simulator included (cudasim_asan): a replay that
# frees what the graph still holds, or reads what a replay freed, is reported.
add_executable(test_sim_asan ${GOLMPI_TEST_DIR}/cudasim/test_sim.c)
target_compile_options(test_sim_asan PRIVATE -fsanitize=address -fno-omit-frame-pointer)
target_link_libraries(test_sim_asan PRIVATE cudasim_asan MPI::MPI_C)
target_link_options(test_sim_asan PRIVATE -fsanitize=address)
foreach(c capture_rules graph_replays graph_one_entry)
  add_test(NAME cudasim_${c}_asan COMMAND test_sim_asan ${c})
  # the simulator never frees a stream (an operation may still name it): no leak check
  set_tests_properties(cudasim_${c}_asan PROPERTIES TIMEOUT 60 LABELS "gpu;sim"
    ENVIRONMENT "ASAN_OPTIONS=detect_leaks=0:halt_on_error=1")
endforeach()
golmpi_mpi_test(NAME cudasim_nccl_blocking RANKS 2 COMMAND $<TARGET_FILE:test_sim> nccl_blocking)
golmpi_mpi_test(NAME cudasim_nccl_duplicate_gpu RANKS 2
  COMMAND $<TARGET_FILE:test_sim> nccl_duplicate_gpu)
golmpi_mpi_test(NAME cudasim_nccl_captured_eager RANKS 2
  COMMAND $<TARGET_FILE:test_sim> nccl_captured_eager)
golmpi_mpi_test(NAME cudasim_nccl_teardown RANKS 2 COMMAND $<TARGET_FILE:test_sim> nccl_teardown)
golmpi_mpi_test(NAME cudasim_nccl_abort_collective RANKS 2
  COMMAND $<TARGET_FILE:test_sim> nccl_abort_collective)
golmpi_mpi_test(NAME cudasim_nccl_sm_order RANKS 2 COMMAND $<TARGET_FILE:test_sim> nccl_sm_order)
set_tests_properties(cudasim_nccl_blocking cudasim_nccl_duplicate_gpu cudasim_nccl_captured_eager
  cudasim_nccl_teardown cudasim_nccl_abort_collective cudasim_nccl_sm_order
  PROPERTIES TIMEOUT 60 LABELS "gpu;sim")
set_property(TEST cudasim_nccl_duplicate_gpu APPEND PROPERTY ENVIRONMENT GOLMPI_SIM_DEVICES=1)

# The same rules as the GPU's test cuda_sim_rules, against the simulator: built as host C++ with
# the simulator's door for a kernel (as cmake/cuda_sim.cmake builds golmpi's .cu files).
set_source_files_properties(${GOLMPI_TEST_DIR}/cudasim/gpu_rules.cu PROPERTIES LANGUAGE CXX
  COMPILE_OPTIONS "-xc++")
add_executable(test_gpu_rules ${GOLMPI_TEST_DIR}/cudasim/gpu_rules.cu)
target_compile_definitions(test_gpu_rules PRIVATE GOLMPI_CUDA_SIM)
target_link_libraries(test_gpu_rules PRIVATE cudasim)
add_test(NAME cudasim_gpu_rules COMMAND test_gpu_rules)
set_tests_properties(cudasim_gpu_rules PROPERTIES TIMEOUT 60 LABELS "gpu;sim")

# The CUDA backend against the CPU's, byte for byte (tests/test_cuda_vs_cpu.c: sizes, boundaries,
# rules, NCCL with and without graphs, MPI), at every halo depth from 1 to 8 on 2 ranks and at 3
# and 8 on 3, each under a schedule seed of its own (the unsuffixed cuda_vs_cpu_np* run at the
# automatic depth).
foreach(c "2;1" "2;2" "2;3" "2;4" "2;5" "2;6" "2;7" "2;8" "3;3" "3;8")
  list(GET c 0 n)
  list(GET c 1 depth)
  golmpi_mpi_test(NAME cudasim_vs_cpu_np${n}_depth${depth} RANKS ${n}
    COMMAND $<TARGET_FILE:test_cuda_vs_cpu> ${depth})
  math(EXPR seed "${n} * 100 + ${depth}")
  set_tests_properties(cudasim_vs_cpu_np${n}_depth${depth} PROPERTIES TIMEOUT 600
    LABELS "gpu;sim" ENVIRONMENT "OMP_NUM_THREADS=1;GOLMPI_SIM_SEED=${seed}")
endforeach()

# Checkpoint on a signal and resume into the series, bit-identical to a run never stopped
# (tests/test_checkpoint.py) on the CUDA backend, on a grid the simulated device runs in seconds.
golmpi_driver_test(cudasim_checkpoint_resume test_checkpoint.py PROCESSORS 3 TIMEOUT 300
  LABELS "gpu;sim" ARGS --run "--backend cuda --size 256 --steps 40000 --save-every 1000 --chunk 4")

# A stopped rank, a killed rank, an NCCL error and a device that stops, under each halo mode:
# every rank ends within --timeout + 5 s, with a message naming the rank.
golmpi_driver_test(cudasim_faults test_sim_faults.py PROCESSORS 3 TIMEOUT 300 LABELS "gpu;sim"
  ARGS --cases stop-nccl,stop-mpi,kill-nccl,kill-mpi,nccl-error,device-nccl,device-mpi)
# Two ranks, rank 1 stopped: rank 0, its one survivor and finder, reaches MPI_Abort, its way out
# not blocked by NCCL's teardown (collective: the stopped rank never joins it).
set(abort_route_case --cases stop-nccl --ranks 2 --via-abort)
golmpi_driver_test(cudasim_faults_two_ranks test_sim_faults.py PROCESSORS 2 TIMEOUT 120
  LABELS "gpu;sim" ARGS ${abort_route_case})

# The fault matrix's simulated-GPU cells (cudasim_fault_matrix_nccl, _mpi): tests/fault_matrix.cmake.

# The orderings of the CUDA path, each taken out of the real code:
# the join that ends a pass (the compute stream waits for the comm stream's edges and exchange)
golmpi_mutant(pass_join cuda/backend_cuda.c
  "    join_comm(cb)\\x3b\\n}\\n\\n/* A whole cycle's passes" "}\\n\\n/* A whole cycle's passes")
# the fork that begins a pass (the comm stream waits for the previous pass's interior)
golmpi_mutant(pass_fork cuda/backend_cuda.c
  "    fork_comm(cb)\\x3b\\n    if (split.edges)" "    if (split.edges)")
# the wait for a frame's copy out of a grid buffer before the buffer is written again
golmpi_mutant(frame_buffer_wait cuda/backend_cuda.c
  "    cuda_frames_before_write(cb->frames, cb->cur_buf ^ 1)\\x3b\\n    if (passes" "    if (passes")
# the poll of a slot's copy to the host before the writer takes the frame: in the backend ...
golmpi_mutant(slot_poll cuda/cuda_frames.c
  "    cuda_watch_wait_stream(f->watch, f->copy[slot],\\n"
  "    if (0) cuda_watch_wait_stream(f->watch, f->copy[slot],\\n")
# ... and in the driver, which asks for it
golmpi_mutant(hand_over_wait src/run.c "    backend_frame_wait(b, slot)\\x3b\\n" "/* taken out */\\n")
# the wait for the writer to give a slot back before a chunk's first frame is copied into it (the
# chunk before last may still be read from it): the writer declares its reads of the slot to the
# simulator (io/output.c), so the copy is a race on every run, however the schedule fell
golmpi_mutant(slot_free_wait src/run.c "    output_wait_slot(out, slot)\\x3b" "/* taken out */")
# the wait for the staged rows on the host before MPI reads them
golmpi_mutant(staged_sync halo/halo_mpi_staged.c
  "    wait_rows(h)\\x3b\\n    halo_post(h->host, send_first" "    halo_post(h->host, send_first")
# NCCL's receives posted in the wrong order (the halo rows swapped): a wrong frame, not a race
golmpi_mutant(nccl_recv_order halo/halo_nccl.c "ncclRecv(top_d, count, ncclUint64, h->up"
  "ncclRecv(bottom_d, count, ncclUint64, h->up")

set(small --width 131 --height 37 --steps 24 --seed 5 --boundary torus)
golmpi_mutation_test(pass_join pass_join RANKS 2 ARGS ${small} --save-every 3 --halo nccl
  --halo-depth 2)
# the join that ends a cycle's capture: the capture ends with the comm stream unjoined
golmpi_mutant(capture_join cuda/backend_cuda.c
  "    enqueue_cycle(impl, p)\\x3b\\n    join_halo(impl)\\x3b"
  "    enqueue_cycle(impl, p)\\x3b")
golmpi_mutation_test(capture_join capture_join RANKS 1 ARGS ${small} --save-every 3 --halo nccl
  --halo-depth 1)
golmpi_mutation_test(pass_fork pass_fork RANKS 2 ARGS ${small} --save-every 3 --halo nccl
  --halo-depth 2)
# (frames 2 generations apart: with a frame every generation the host's wait for each frame
# before the next pass orders the copy anyway)
golmpi_mutation_test(frame_buffer_wait frame_buffer_wait RANKS 2
  ARGS ${small} --save-every 2 --halo nccl --halo-depth 1)
# frames of many pages each, so that the pinned slot's pages close to the host
set(large --width 512 --height 160 --steps 12 --save-every 2 --chunk 3 --seed 5)
golmpi_mutation_test(slot_poll slot_poll RANKS 2 ARGS ${large} --halo nccl --halo-depth 2)
golmpi_mutation_test(hand_over_wait hand_over_wait RANKS 2 ARGS ${large} --halo mpi)
golmpi_mutation_test(slot_free_wait slot_free_wait RANKS 2 EVERY_SEED
  ARGS ${large} --halo nccl)
# messages of a whole page (8 rows of 4096 cells): the staging buffer's page closes to the host
golmpi_mutation_test(staged_sync staged_sync RANKS 2
  ARGS --width 4096 --height 40 --steps 16 --save-every 8 --seed 5 --halo mpi --halo-depth 8)
golmpi_mutation_test(nccl_recv_order nccl_recv_order RANKS 3 ARGS ${small} --save-every 3
  --halo nccl)

# What only the simulated GPU's strict rules catch (docs/GPU.md), where it is as strict as a GPU:
# the fork before a load's exchange: a pageable copy to the device does not order the stream
golmpi_mutant(load_fork cuda/backend_cuda.c
  "const char *what) {\\n    fork_comm(cb)\\x3b\\n" "const char *what) {\\n")
# a wait inside the capture, on a stream outside it: refused on the capturing thread
golmpi_mutant(capture_wait cuda/backend_cuda.c
  "    fork_comm(cb)\\x3b\\n    if (split.edges)"
  "    wait_stream(cb, cb->comm, \"the comm stream\")\\x3b\\n    fork_comm(cb)\\x3b\\n    if (split.edges)")
# the watchdog's bound on the generations queued: the host fills the launch queue and blocks
golmpi_mutant(watch_bound cuda/cuda_watch.c
  "    if (back >= w->marks_done)\\n" "    if (0)\\n")
# rank 0 runs every pass eagerly while its peers replay the captured graphs
golmpi_mutant(graph_eager cuda/backend_cuda.c
  "    cb->graphed = !cfg->no_graphs && halo_capturable(cb->halo)\\x3b"
  "    cb->graphed = !cfg->no_graphs && halo_capturable(cb->halo) && cb->slab.rank != 0\\x3b")
# the owed generations queued at the end of every call, not only where an op needs the grid: rank
# 1, cutting its calls finer (GOLMPI_DEBUG_PIECE), runs eagerly the cycles its peer replays, and
# NCCL meets a captured exchange on one rank and an eager one on the other
golmpi_mutant(settle_each_call cuda/backend_cuda.c
  "            run_passes(cb, cb->halo_left)\\x3b\\n    }\\n"
  "            run_passes(cb, cb->halo_left)\\x3b\\n    }\\n    run_passes(cb, cb->owed)\\x3b\\n")
# the nonblocking communicator destroyed while its finalize is still in progress
golmpi_mutant(finalize_wait halo/halo_nccl.c
  "        if (rc == ncclInProgress)\\n            wait_ready(h, h->init, \"ncclCommFinalize\")\\x3b\\n        else\\n            NCCL_CHECK(rc)\\x3b\\n"
  "        if (rc != ncclInProgress) NCCL_CHECK(rc)\\x3b\\n")
# the watchdog waiting (HALO_ABORT_GRACE_S) for its NCCL teardown, which is collective: the
# stopped peer never joins it, so the way out blocks until the fatal path's deadline ends it
golmpi_mutant(abort_waits halo/halo_nccl.c
  "static void nccl_abort(void *impl) { tear_down(impl, 0)\\x3b }"
  "static void nccl_abort(void *impl) { tear_down(impl, HALO_ABORT_GRACE_S)\\x3b }")

golmpi_mutation_test(load_fork load_fork RANKS 2 ARGS --pattern ${GOLMPI_TEST_DIR}/patterns/gosper.rle
  --width 131 --height 37 --steps 24 --save-every 3 --halo nccl --halo-depth 2)
golmpi_mutation_test(capture_wait capture_wait RANKS 1 ARGS ${small} --save-every 3 --halo nccl
  --halo-depth 1)
golmpi_mutation_test(graph_eager graph_eager RANKS 2 ARGS ${small} --save-every 3 --halo nccl
  --halo-depth 1)
golmpi_mutation_test(settle_each_call settle_each_call RANKS 2 ARGS --width 131 --height 40
  --steps 96 --save-every 48 --seed 5 --boundary torus --halo nccl --halo-depth 16)
if(TEST cudasim_mutation_settle_each_call)
  set_property(TEST cudasim_mutation_settle_each_call APPEND PROPERTY ENVIRONMENT
    GOLMPI_DEBUG_PIECE=1:5)
endif()
golmpi_mutation_test(finalize_wait finalize_wait RANKS 2 ARGS ${small} --save-every 3 --halo nccl)
# rank 1's device stops: with the bound every rank ends within --timeout + 5 s and no host thread
# ever blocks in the full launch queue (cudasim_faults); without it, a rank blocks there, which
# the simulator says the moment it happens (SIM_QUEUE_FULL_LINE), so the case waits for no
# deadline. No frames: a frame's own watched wait would otherwise end the run first, or not, as
# the schedule falls.
# Without a Python these are not registered, and the configure says so (golmpi_test PYTHON).
golmpi_test(cudasim_mutation_watch_bound PYTHON ONE_THREAD PROCESSORS 3 TIMEOUT 120
  LABELS "gpu;sim" COMMAND ${GOLMPI_TEST_DIR}/test_sim_faults.py
  --golmpi $<TARGET_FILE:golmpi_mut_watch_bound> --cases device-nccl --no-output
  --mpiexec ${MPIEXEC_EXECUTABLE} ${GOLMPI_MPIEXEC_FLAGS})
if(TEST cudasim_mutation_watch_bound)
  set_tests_properties(cudasim_mutation_watch_bound PROPERTIES
    PASS_REGULAR_EXPRESSION "device-nccl: a rank blocked in the full launch queue")
endif()
# rank 1 stops in a two-rank run (cudasim_faults_two_ranks): the mutant's one survivor blocks in
# the teardown until its fatal path's deadline ends it, which it says; that line, and no other
# failure, passes this case.
golmpi_test(cudasim_mutation_abort_waits PYTHON ONE_THREAD PROCESSORS 2 TIMEOUT 120
  LABELS "gpu;sim" COMMAND ${GOLMPI_TEST_DIR}/test_sim_faults.py
  --golmpi $<TARGET_FILE:golmpi_mut_abort_waits> ${abort_route_case}
  --mpiexec ${MPIEXEC_EXECUTABLE} ${GOLMPI_MPIEXEC_FLAGS})
if(TEST cudasim_mutation_abort_waits)
  set_tests_properties(cudasim_mutation_abort_waits PROPERTIES
    PASS_REGULAR_EXPRESSION "stop-nccl: a rank's way out blocked")
endif()

# A pass's dependency graph (tests/cudasim/test_pass_graph.py, on the trace of tests/cudasim/
# sim_trace.c), on one rank, every pass eager (--no-graphs): depth 16, a cycle of a pass of one
# launch then a split pass that exchanges (8 and 8); depth 4, every pass split and exchanging;
# depth 1. Then the cycles replayed from the graphs: depth 1, and depth 16, whose graph holds both
# kinds of pass. Then each edge the check asserts, taken out of the real code by a mutant of its
# own, on the run that has that edge: the check must fail on that edge alone.
set(pass_graph_grid --width 131 --height 40 --seed 5 --boundary torus --halo nccl)
set(pass_graph_deep --expect exchange,quiet,eager ${pass_graph_grid} --halo-depth 16 --no-graphs
  --steps 32)
set(pass_graph_split --expect exchange,eager ${pass_graph_grid} --halo-depth 4 --no-graphs
  --steps 32)
set(pass_graph_eager --expect exchange,eager ${pass_graph_grid} --halo-depth 1 --no-graphs
  --steps 8)
set(pass_graph_replayed --expect exchange,graph ${pass_graph_grid} --halo-depth 1 --steps 8)
set(pass_graph_cycle --expect exchange,quiet,graph ${pass_graph_grid} --halo-depth 16
  --kernel baseline --steps 64)
foreach(run deep split eager replayed cycle)
  golmpi_test(cudasim_pass_graph_${run} PYTHON ONE_THREAD TIMEOUT 300 LABELS "gpu;sim"
    COMMAND ${GOLMPI_TEST_DIR}/cudasim/test_pass_graph.py --golmpi $<TARGET_FILE:golmpi>
            ${pass_graph_${run}} --mpiexec ${MPIEXEC_EXECUTABLE} ${GOLMPI_MPIEXEC_FLAGS})
endforeach()
# (pass_fork, pass_join and graph_eager are defined above)
# the interior made to wait for its own pass's bands: no race, every frame right, only slower;
# the race check cannot see it, the dependency graph must
golmpi_mutant(interior_waits cuda/backend_cuda.c
  "    /* queued before a host-side MPI exchange below"
  "    join_comm(cb)\\x3b\\n    /* queued before a host-side MPI exchange below")
# a pass of one launch not waiting for the exchange whose halo rows it reads
golmpi_mutant(halo_join cuda/backend_cuda.c
  "        join_halo(cb)\\x3b\\n        pass_rows(cb, p, pass_whole_rows"
  "        pass_rows(cb, p, pass_whole_rows")
# the compute stream joining the exchange at a pass's end, not only the bands
golmpi_mutant(join_exchange cuda/backend_cuda.c
  "    CUDA_CHECK(cudaStreamWaitEvent(cb->compute, cb->bands_done, 0))\\x3b"
  "    CUDA_CHECK(cudaStreamWaitEvent(cb->compute, cb->halo_done, 0))\\x3b")
# every pass split, bands on the comm stream, whether it exchanges or not
golmpi_mutant(split_quiet cuda/backend_cuda.c
  "    if (n < halo_left || (ps.dead_top && ps.dead_bottom)) {"
  "    if (ps.dead_top && ps.dead_bottom) {"
  "    exchange_halo(cb, p ^ 1, timed)\\x3b\\n    join_comm(cb)\\x3b"
  "    if (n == halo_left) exchange_halo(cb, p ^ 1, timed)\\x3b\\n    join_comm(cb)\\x3b")
# the pass that exchanges run as one launch on the compute stream, its bands not ahead
golmpi_mutant(whole_ending cuda/backend_cuda.c
  "    if (n < halo_left || (ps.dead_top && ps.dead_bottom)) {" "    if (1) {")
foreach(m "pass_fork;fork;deep" "halo_join;join-halo;deep" "split_quiet;one-launch;deep"
          "whole_ending;split;deep" "pass_join;join;split" "join_exchange;join-only;split"
          "interior_waits;interior;deep" "graph_eager;expect;replayed"
          "graph_eager;expect;cycle;graph_eager_cycle")
  list(GET m 0 mutant)
  list(GET m 1 edge)
  list(GET m 2 run)
  set(name ${mutant})
  list(LENGTH m fields)
  if(fields GREATER 3)
    list(GET m 3 name)
  endif()
  golmpi_test(cudasim_pass_graph_${name} PYTHON ONE_THREAD TIMEOUT 300 LABELS "gpu;sim"
    COMMAND ${GOLMPI_TEST_DIR}/cudasim/test_pass_graph.py --golmpi $<TARGET_FILE:golmpi>
            --mutant $<TARGET_FILE:golmpi_mut_${mutant}> --missing ${edge} ${pass_graph_${run}}
            --mpiexec ${MPIEXEC_EXECUTABLE} ${GOLMPI_MPIEXEC_FLAGS})
endforeach()
