"""Synthetic probe runs for tests that need a machine database without running the probe:
a memory mountain with clear steps at the caches' sizes (1, 3, 8 and 30 ns per read; a
random chase of 1, 4, 15 and 90 ns per access; a random gather of 1, 2, 6 and 20)."""
from cll_grammar.machine import BspPoint, CacheLevel, MountainPoint, Operation, ProbeRun

CACHES = [CacheLevel(1, "Data", 32 * 1024, 64), CacheLevel(1, "Instruction", 32 * 1024, 64),
          CacheLevel(2, "Unified", 512 * 1024, 64, 480 * 1024),
          CacheLevel(3, "Unified", 16 * 1024 ** 2, 64)]
LEVEL_COSTS = ((32 * 1024, 1e-9), (512 * 1024, 3e-9), (16 * 1024 ** 2, 8e-9), (None, 30e-9))
CHASE_COSTS = ((32 * 1024, 1e-9), (512 * 1024, 4e-9), (16 * 1024 ** 2, 15e-9), (None, 90e-9))
GATHER_COSTS = ((32 * 1024, 1e-9), (512 * 1024, 2e-9), (16 * 1024 ** 2, 6e-9), (None, 20e-9))


def step_cost(working_set: int, memory_factor: float = 1.0, costs=LEVEL_COSTS) -> float:
    """Seconds per sequential read (or with `costs=CHASE_COSTS`, per random access) at this
    working set: the level's cost."""
    for size, cost in costs:
        if size is None:
            return cost * memory_factor
        if working_set <= size:
            return cost


def probe_run(host="node1", cpu="Test CPU 9000", date="2026-11-23T10:00:00Z", label=None,
              memory_factor=1.0, quick=False, gather=True) -> ProbeRun:
    """A whole probe run: caches, a stepped mountain (4 KiB .. 128 MiB, strides 8/64/256,
    reads and writes, a random chase (CHASE_COSTS) and a random gather (GATHER_COSTS); memory
    `memory_factor` times slower), operations and BSP figures. Without `gather`, a run probed
    before the probe measured gathers."""
    mountain = [MountainPoint(access, 2 ** k, stride, step_cost(2 ** k, memory_factor)
                              * (stride / 8) ** 0.5 * (1.25 if access == "write" else 1), 0.01)
                for k in range(12, 28) for stride in (8, 64, 256) for access in ("read", "write")]
    mountain += [MountainPoint("chase", 2 ** k, 64, step_cost(2 ** k, memory_factor, CHASE_COSTS), 0.01)
                 for k in range(12, 28)]
    mountain += [MountainPoint("gather", 2 ** k, 64, step_cost(2 ** k, memory_factor, GATHER_COSTS), 0.01)
                 for k in range(12, 28) if gather]
    operations = [Operation("timer", 2.0e-8, 0.02), Operation("add_dependent", 1.1e-9, 0.01),
                  Operation("divide_dependent", 4.5e-9, 0.01)]
    bsp = [BspPoint(p, m, 1e-9 * p, 0.05, 2e-6 * p, 0.1) for p in (1, 2, 4) for m in ("small", "large")]
    return ProbeRun(host, cpu, date, quick, label, 2, 95.0, list(CACHES), mountain, operations, bsp)


def write_stream_trace(path, sizes, memory_factor=1.0, host="node1", cpu="Test CPU 9000",
                       working_set="8*N", seed=1, chase=False, passes=1, rise=0.0) -> None:
    """A trace of a streaming experiment over N doubles measured on the synthetic machine:
    per element 0.3 ns of computation plus 0.9 reads at the mountain's cost for 8·N bytes
    (three repetitions, 1% one-sided noise), its header stating the working set. With
    `chase`, a random chase instead: per element one access at the chase's cost for 64·N bytes
    (the working set should then be 64*N). `passes`: how many times the reads go through the
    data (a kernel that reads it several times per record). `rise`: the cost per element also
    grows as (N/2^14)^rise above N = 2^14 (a cost that keeps rising within a level, which `set
    trend on` continues)."""
    import numpy as np
    rng = np.random.default_rng(seed)

    def per_element(n):
        growth = max(1.0, n / 2 ** 14) ** rise
        if chase:
            return step_cost(64 * n, memory_factor, CHASE_COSTS) * growth
        return (0.3e-9 + 0.9 * passes * step_cost(8 * n, memory_factor)) * growth
    records = [f"stream 0 0 {2e-7 + n * per_element(n) * (1 + 0.01 * rng.random())!r} "
               f"{float(n)!r}" for _ in range(3) for n in sizes]
    bytes_line = f"#  bytes: {working_set}\n" if working_set else ""
    path.write_text(
        f"#cll-trace 1\n#program: s\n#source: s.c\n#command: ./s\n#date: 2026-11-23T10:00:00Z\n"
        f"#host: {host}\n#cpu: {cpu}\n#parallel: none\n#procs: 1\n#timer: tsc\n"
        f"#timer_resolution: 3e-10\n#overhead: 2e-8\n#status: complete\n#experiment: stream\n"
        f"#  formula: stream[0] + stream[1]*N\n{bytes_line}#  source: s.c:1:1\n"
        f"#  columns: rank thread time N\n#  records: {len(records)}\n#data\n"
        + "\n".join(records) + "\n#end\n")


def write_exchange_trace(path, sizes, procs=2, host="node1", cpu="Test CPU 9000") -> None:
    """An MPI trace of an exchange `D` (formula D[0] + D[1]*size) at one P, each record a
    superstep costing the synthetic machine's L + g·h with h = 2·size bytes."""
    g, L = 1e-9 * procs, 2e-6 * procs                  # probe_run's BSP figures at this P
    records = [f"D {rank} 0 {L + g * 2 * s!r} {float(s)!r} {float(procs)!r} 1 {s} 1 {s} 1 {2 * s} {L + g * 2 * s!r}"
               for s in sizes for rank in range(procs) for _ in range(3)]
    path.write_text(
        f"#cll-trace 1\n#program: x\n#host: {host}\n#cpu: {cpu}\n#parallel: MPI\n#procs: {procs}\n"
        f"#clock_offsets: {' '.join(['0'] * procs)}\n#ranks: {' '.join(map(str, range(procs)))}\n"
        f"#status: complete\n#experiment: D\n#  formula: D[0] + D[1]*size\n#  source: x.c:1:1\n"
        f"#  columns: rank thread time size P msgs_sent bytes_sent msgs_recv bytes_recv partners h mpi_time\n"
        f"#  records: {len(records)}\n#data\n" + "\n".join(records) + "\n#end\n")
