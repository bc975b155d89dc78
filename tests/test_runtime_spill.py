"""Volume: 10 million records spill to disk with bounded memory and none is lost."""
import os

from support.runtime import begin, build, c_program, end, run

N = 10_000_000


def test_ten_million_records_spill_with_bounded_memory(tmp_path):
    src = c_program({"s": ("s[0] + s[1]*i", ["i"])}, f"""
        for (long i = 0; i < {N}; i++) {{ {begin("s", "i")} {end("s")} }}
        printf("spilled %llu of %llu\\n", (unsigned long long)cll_spilled_count(),
               (unsigned long long)cll_record_count());
        system("ls -a . > files-before-report");
        cll_report(0, 0);
        FILE *f = fopen("/proc/self/status", "r");
        char line[256];
        while (fgets(line, sizeof line, f))
            if (!strncmp(line, "VmHWM:", 6)) fputs(line, stdout);
        return 0;""", prelude="#include <string.h>")
    result = run(build(tmp_path, {"prog.c": src}), timeout=120)
    assert result.returncode == 0, result.stderr
    spilled_line, hwm_line = result.stdout.splitlines()
    spilled, _, total = spilled_line.split()[1:]
    assert int(total) == N and int(spilled) > N * 9 // 10
    peak_kib = int(hwm_line.split()[1])
    assert peak_kib < 64 * 1024, hwm_line     # 10M records are ~240 MB: far more than this
    assert ".prog.cll.1.dat.spill0." in (tmp_path / "files-before-report").read_text()
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".")]   # spills removed
    # every record present and in order: count lines and check the variable column
    expected = 0
    with open(tmp_path / "prog.cll.1.dat") as trace:
        for line in trace:
            if line.startswith("s "):
                assert line.rsplit(" ", 1)[1] == f"{expected}\n"
                expected += 1
            elif line.startswith("#  records:"):
                assert line == f"#  records: {N}\n"
    assert expected == N
