"""The fields of golmpi's --stats JSON and their types, shared by the tests that read it
(test_stats.py, test_backend_auto.py): stats_problems(stats, ranks, cuda, argv) lists what is
missing or wrong. The first block of FIELDS are the names scripts read since before issue 10
(jobs/scaling.sbatch, bench/, tests/), which must not change."""
import re

ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def is_str(v):
    return isinstance(v, str) and v != ""


# name -> check of its value; the first block are the fields scripts read since before issue 10
FIELDS = {
    "version": is_str, "backend": is_str, "halo": is_str, "ranks": is_int,
    "threads_per_rank": is_int, "width": is_int, "height": is_int, "rule": is_str,
    "boundary": is_str, "generation_start": is_int, "generation_end": is_int,
    "generations": is_int, "cell_updates": is_num, "wall_s": is_num,
    "whole_run_cell_updates_per_s": is_num, "compute_cell_updates_per_s": is_num,
    "compute_s": is_num,
    "halo_s": is_num, "frame_s": is_num, "io_write_s": is_num, "io_wait_s": is_num,
    "frames": is_int, "files": is_int, "bytes_written": is_int,
    "collective_io": lambda v: v is None or isinstance(v, bool),
    "io_transfer": lambda v: v in (None, "collective", "independent", "direct"),
    "population": is_int,
    "command_line": is_str, "argv": lambda v: isinstance(v, list) and all(map(is_str, v)),
    "start_time": lambda v: is_str(v) and ISO.match(v), "end_time": lambda v: is_str(v) and ISO.match(v),
    "hosts": lambda v: isinstance(v, list) and v and all(
        isinstance(h, dict) and is_str(h.get("name")) and is_int(h.get("ranks"))
        and isinstance(h.get("rank_list"), list) for h in v),
    "threads": is_int, "git_commit": is_str, "kernel": is_str,
    # the plan's GPU sharing (core/plan.h's gol_gpu_share): null on the CPU backend
    "ranks_per_gpu": lambda v: v is None or (is_int(v) and v >= 1),
    "mps": lambda v: v is None or isinstance(v, bool),
    # the CUDA kernel's shape and why (cuda/shape_choice.h): null on the CPU backend
    "kernel_shape": lambda v: v is None or (
        isinstance(v, dict) and is_str(v.get("name")) and is_str(v.get("reason"))
        and isinstance(v.get("seconds_per_generation"), dict)),
    "versions": lambda v: isinstance(v, dict) and all(is_str(v.get(k)) for k in VERSION_KEYS),
    "times_over_ranks": lambda v: isinstance(v, dict) and all(
        isinstance(v.get(k), dict) and all(is_num(v[k].get(s)) for s in ("min", "mean", "max"))
        for k in ("compute_s", "halo_s", "frame_s", "io_write_s", "io_wait_s")),
    "io_bandwidth_bytes_per_s": lambda v: v is None or is_num(v),
    "population_series": lambda v: isinstance(v, dict) and all(
        isinstance(v.get(k), list) and all(map(is_int, v[k])) for k in ("generation", "population")),
    # per chunk (src/chunk_log.h; empty without frames): tests/test_chunks.py checks the figures
    "chunks": lambda v: isinstance(v, list) and all(
        isinstance(c, dict)
        and all(is_int(c.get(k)) for k in ("chunk", "generation_from", "generation_to",
                                           "generations", "frames", "bytes"))
        and all(isinstance(c.get(k), dict) and is_num(c[k].get("max")) and is_int(c[k].get("rank"))
                and is_num(c[k].get("mean"))
                for k in ("compute_s", "halo_s", "frame_s", "io_write_s", "io_wait_s"))
        for c in v),
}
VERSION_KEYS = ("golmpi", "git_commit", "compiler", "cuda_compiler", "mpi", "mpi_standard", "hdf5",
                "cuda_runtime", "cuda_driver", "nccl")


def stats_problems(s, ranks, cuda=None, argv=None):
    problems = []
    for k, ok in FIELDS.items():
        if k not in s:
            problems.append(f"--stats has no {k!r}")
        elif not ok(s[k]):
            problems.append(f"--stats {k!r} = {s[k]!r} has the wrong type or form")
    if problems:
        return problems
    if s["ranks"] != ranks or sum(h["ranks"] for h in s["hosts"]) != ranks:
        problems.append(f"ranks {s['ranks']}, hosts {s['hosts']}, want {ranks} ranks")
    names = [h["name"] for h in s["hosts"]]
    if len(set(names)) != len(names) or sorted(r for h in s["hosts"] for r in h["rank_list"]) != list(range(ranks)):
        problems.append(f"hosts not unique or ranks missing: {s['hosts']}")
    if argv is not None and s["argv"][1:] != argv:
        problems.append(f"argv {s['argv']}, want the program and {argv}")
    if s["command_line"] != " ".join(s["argv"]):
        problems.append(f"command_line {s['command_line']!r} is not argv {s['argv']} joined")
    # each rate is named for what it divides by: the whole run's wall time, or compute alone
    for key, secs in (("whole_run_cell_updates_per_s", "wall_s"),
                      ("compute_cell_updates_per_s", "compute_s")):
        want = s["cell_updates"] / s[secs] if s[secs] > 0 else 0
        if abs(s[key] - want) > 1e-9 * want:
            problems.append(f"{key} {s[key]}, want cell_updates / {secs} = {want}")
    if "cell_updates_per_s" in s:
        problems.append("--stats still has 'cell_updates_per_s', which named two rates at once")
    if s["end_time"] < s["start_time"]:
        problems.append(f"end_time {s['end_time']} before start_time {s['start_time']}")
    for k, t in s["times_over_ranks"].items():
        eps = 1e-9 * abs(t["max"]) + 1e-12  # the mean is a sum divided, not exact
        if not t["min"] - eps <= t["mean"] <= t["max"] + eps or t["max"] != s[k]:
            problems.append(f"{k} over ranks {t}: want min <= mean <= max = {k} ({s[k]})")
    v = s["versions"]
    if v["git_commit"] != s["git_commit"] or v["golmpi"] != s["version"]:
        problems.append(f"versions {v} disagree with git_commit/version")
    if not re.match(r"^\d+\.\d+\.\d+$", v["hdf5"]) or not re.match(r"^\d+\.\d+$", v["mpi_standard"]):
        problems.append(f"HDF5 {v['hdf5']!r}, MPI standard {v['mpi_standard']!r}")
    if (s["backend"] == "cuda") != (s["ranks_per_gpu"] is not None and s["mps"] is not None):
        problems.append(f"ranks_per_gpu {s['ranks_per_gpu']!r}, mps {s['mps']!r}: numbers on the "
                        f"cuda backend, null on {s['backend']!r}")
    cuda_keys = ("cuda_runtime", "cuda_driver", "nccl", "cuda_compiler")
    if cuda or s["backend"] == "cuda":
        if not re.match(r"^\d+\.\d+\.\d+$", v["nccl"]) or not re.match(r"^\d+\.\d+$", v["cuda_runtime"]):
            problems.append(f"a CUDA build must name NCCL and the CUDA runtime: {v}")
    elif cuda is not None and any(v[k] != "none" for k in cuda_keys):
        problems.append(f"a build without CUDA must say none: {v}")
    return problems
