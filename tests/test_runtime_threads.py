"""Threads: OpenMP programs (thread ids from omp_get_thread_num) and plain pthreads (ids in
order of first record); every thread's records must be in the trace."""
from collections import Counter

from support.runtime import begin, build, c_program, end, read_trace, run

EXPERIMENTS = {"w": ("w[0] + w[1]*i", ["i"])}


def test_openmp_threads_records_and_ids(tmp_path):
    src = c_program(EXPERIMENTS, f"""
        volatile double s = 0;
        #pragma omp parallel for schedule(static, 1)
        for (int i = 0; i < 4000; i++) {{
            {begin("w", "i")}
            s += i;
            {end("w")}
        }}
        cll_report(0, 0); return 0;""", parallel="OpenMP", prelude="#include <omp.h>",
        init="cll_set_procs(omp_get_max_threads(), 0); "
             "cll_set_thread_id_function(omp_get_thread_num);")
    exe = build(tmp_path, {"prog.c": src}, flags=("-fopenmp",))
    result = run(exe, {"OMP_NUM_THREADS": "4"})
    assert result.returncode == 0, result.stderr
    trace = read_trace(tmp_path / "prog.cll.4.dat")
    assert trace.header["parallel"] == "OpenMP" and trace.header["procs"] == "4"
    records = trace.records["w"]
    assert sorted(int(r[3]) for r in records) == list(range(4000))
    # schedule(static, 1): iteration i runs on thread i % 4
    assert all(int(r[1]) == int(r[3]) % 4 for r in records)
    assert Counter(r[1] for r in records) == {"0": 1000, "1": 1000, "2": 1000, "3": 1000}


def test_pthreads_numbered_in_order_of_first_record(tmp_path):
    src = c_program(EXPERIMENTS, f"""
        pthread_t t[3];
        {begin("w", "-1")} {end("w")}
        for (long k = 0; k < 3; k++) {{
            pthread_create(&t[k], 0, work, (void *)k);
            pthread_join(t[k], 0);      /* one after another: ids 1, 2, 3 */
        }}
        cll_report(0, 0); return 0;""", prelude="#include <pthread.h>", functions=f"""
        static void *work(void *arg) {{
            long k = (long)arg;
            for (long i = 0; i < 100000; i++) {{ {begin("w", "k")} {end("w")} }}
            return 0;
        }}""")
    result = run(build(tmp_path, {"prog.c": src}, flags=("-pthread",)))
    assert result.returncode == 0, result.stderr
    records = read_trace(tmp_path / "prog.cll.1.dat").records["w"]
    assert Counter((r[1], r[3]) for r in records) == {
        ("0", "-1"): 1, ("1", "0"): 100000, ("2", "1"): 100000, ("3", "2"): 100000}
