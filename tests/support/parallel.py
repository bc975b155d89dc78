"""MPI and OpenMP traces written as the runtime writes them (docs/trace-format.md and the MPI
contract: per-rank records, the PMPI columns, #clock_offsets, #ranks), generated with numpy.

`write_sweep` writes one file per P of a program with two experiments:
- `f`, the FFT's whole-program formula in N and P, one record per rank and repetition, with
  communication: each rank sends log2(P) messages of N*16/P bytes to log2(P) partners;
- `work`, formula in N only (so P comes from the header), uneven: rank r has r+1 records per
  N, each of time 1e-6*N, and at P = 4 rank 3 has none.
The exact figures are returned so tests can check llac's report against them.
"""
from __future__ import annotations

import numpy as np

F_FORMULA = "f[0] + f[1]*log(P) + f[2]*(N/P)*log(N/P) + f[3]*N*(P-1)/P"
F_TRUE = (1e-4, 2e-3, 5e-8, 1e-8)
COMM = ("msgs_sent", "bytes_sent", "msgs_recv", "bytes_recv", "partners", "h", "mpi_time")
REPS = 3


def f_time(N, P):
    """The true time of f, the model the fit should find."""
    a, b, c, d = F_TRUE
    return a + b * np.log(P) + c * (N / P) * np.log(N / P) + d * N * (P - 1) / P


def idle_rank(P, rank) -> bool:
    """Whether `rank` runs no record of `work` at this P."""
    return P == 4 and rank == 3


def mpi_trace_text(P: int, sizes, cores: int | None = 2, host: str = "node-a", seed: int = 0) -> str:
    """One MPI trace, `prog.cll.<P>.dat`, with experiments f and work; returns its text."""
    rng = np.random.default_rng(seed + P)
    f_rows, work_rows = [], []
    steps = int(np.log2(P))
    for N in sizes:
        for rep in range(REPS):
            for rank in range(P):
                t = float(f_time(N, P) * (1 + 0.005 * rng.standard_normal()))
                sent = N * 16 // P * steps
                comm = [steps, sent, steps, sent, steps, 2 * sent, 0.1 * t * (P > 1)]
                f_rows.append(f"f {rank} 0 {t!r} {N} {P} " + " ".join(repr(v) for v in comm))
        for rank in range(P):
            if idle_rank(P, rank):
                continue
            for _ in range(rank + 1):
                work_rows.append(f"work {rank} 0 {1e-6 * N!r} {N} " + " ".join(["0"] * 6 + ["0.0"]))
    header = ["#cll-trace 1", "#program: prog", "#parallel: MPI", f"#procs: {P}", f"#host: {host}",
              *([f"#cores: {cores}"] if cores else []),
              "#clock_offsets: " + " ".join(["0"] * P), "#ranks: " + " ".join(map(str, range(P))),
              "#status: complete",
              "#experiment: f", f"#  formula: {F_FORMULA}", "#  source: prog.c:10:1",
              f"#  columns: rank thread time N P {' '.join(COMM)}", f"#  records: {len(f_rows)}",
              "#experiment: work", "#  formula: work[0] + work[1]*N", "#  source: prog.c:20:1",
              f"#  columns: rank thread time N {' '.join(COMM)}", f"#  records: {len(work_rows)}",
              "#data"]
    return "\n".join(header + f_rows + work_rows + ["#end"]) + "\n"


def write_sweep(folder, procs=(1, 2, 4, 8), sizes=(1024, 2048, 4096, 8192, 16384), prefix="prog",
                **options):
    """Write `<prefix>.cll.<P>.dat` for each P; returns the paths."""
    paths = []
    for P in procs:
        path = folder / f"{prefix}.cll.{P}.dat"
        path.write_text(mpi_trace_text(P, sizes, **options))
        paths.append(path)
    return paths


def work_of(P: int, N_values) -> np.ndarray:
    """Each rank's work (summed time) in experiment `work` at P, over the sizes N_values."""
    return np.array([0.0 if idle_rank(P, r) else (r + 1) * 1e-6 * sum(N_values) for r in range(P)])


def openmp_trace_text(threads: int = 4) -> str:
    """An OpenMP trace: experiment `loop` with one record per thread, thread t doing t+1 units."""
    rows = [f"loop 0 {t} {(t + 1) * 1e-3!r} 1000" for t in range(threads)]
    header = ["#cll-trace 1", "#program: omp", "#parallel: OpenMP", f"#procs: {threads}",
              "#status: complete", "#experiment: loop", "#  formula: loop[0] + loop[1]*N",
              "#  columns: rank thread time N", f"#  records: {len(rows)}", "#data"]
    return "\n".join(header + rows + ["#end"]) + "\n"
