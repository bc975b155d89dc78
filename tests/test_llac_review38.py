"""What session 32 fixed in llac from the last reviews' list: the names of a trace loaded
again and again."""
from support.commands import llac
from support.traces import write_matinit


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
