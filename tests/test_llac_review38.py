"""What session 32 fixed in llac from the last reviews' list: the names of a trace loaded
again and again."""
import subprocess
import sys

from support.traces import write_matinit


def llac(workdir, script):
    """`llac -c script` in `workdir`: (exit status, stdout, stderr); never a traceback."""
    done = subprocess.run([sys.executable, "-m", "llac", "-c", script], cwd=workdir, capture_output=True,
                          text=True, timeout=120)
    assert "Traceback" not in done.stderr
    return done.returncode, done.stdout, done.stderr


def test_a_trace_loaded_again_and_again_counts_its_loads_apart_from_the_file_name(tmp_path):
    """The third load of prog.cll.1.dat was named colinit@prog_cll_12 (read as 12 processors)."""
    write_matinit(tmp_path / "prog.cll.1.dat")
    write_matinit(tmp_path / "m.dat")
    status, out, err = llac(tmp_path, 'load "prog.cll.1.dat"; load "prog.cll.1.dat"; load "prog.cll.1.dat"; '
                                      'load "m.dat"; load "m.dat"')
    assert status == 0, err
    created = [line.split(":")[0].removeprefix("created ") for line in out.splitlines() if line.startswith("created colinit")]
    assert created == ["colinit", "colinit@prog_cll_1", "colinit@prog_cll_1_2", "colinit@m", "colinit@m2"], out
    status, out, err = llac(tmp_path, 'load "prog.cll.1.dat"; load "prog.cll.1.dat"; load "prog.cll.1.dat"; '
                                      'fit colinit@prog_cll_1_2; predict colinit@prog_cll_1_2 N=100')
    assert status == 0 and "model of colinit@prog_cll_1_2" in out, err
