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


def test_a_probe_run_given_by_its_number_is_told_how_runs_are_named(tmp_path):
    """A review: `machine compare 1 2` was a bare syntax error."""
    for script in ("machine compare 1 2", "set seed 1; machine show 3"):
        status, _, err = llac(tmp_path, script)
        number = script[-1] if script.endswith("3") else "1"
        assert status == 1 and (f"(a probe run is named MACHINE@ID or MACHINE@LABEL, such as MACHINE@{number}: "
                                f"`machine list` shows them)") in err, err
    status, _, err = llac(tmp_path, "predict f N=1 2")
    assert status == 1 and "probe run" not in err
