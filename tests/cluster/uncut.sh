# Sourced by tests/test_cluster.sh and tests/test_cluster_faults.sh: a fault run's series never
# interrupted, 2 ranks on node n1 outside Slurm, for the fault run's frames to be compared with.
# Uses the caller's `on` (a command on a node), `die`, MPI_ENV (the cluster's Open MPI settings)
# and BIN.
uncut_run() { # uncut_run DIR SIZE STEPS SAVE SEED: DIR/life.h5, its log in DIR.out
    mkdir -p "$1"
    on n1 env "${MPI_ENV[@]}" OMP_NUM_THREADS=1 timeout 300 mpirun -n 2 "$BIN" --backend cpu \
        --size "$2" --steps "$3" --save-every "$4" --chunk 2 --seed "$5" --quiet \
        --output "$1/life.h5" >"$1.out" 2>&1 || die "the uninterrupted run failed: $(tail -n 5 "$1.out")"
}
