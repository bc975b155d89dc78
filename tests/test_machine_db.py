"""The machine database (issue 11, item 2): the SQLite store's round trip and migrations, and
llac's `machine` commands as a user types them (list, show, compare, mountain, bsp, export,
import), with their errors."""
import hashlib
import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path
from dataclasses import asdict

import pytest

from cll_grammar.machine import BspPoint, machine_name, this_cpu_model, this_host
from cll_grammar.machinedb import MIGRATIONS, SCHEMA_VERSION, MachineDB, MachineDBError
from support.machines import probe_run


def llac(command: str, db, cwd=None) -> subprocess.CompletedProcess:
    """Run `llac -c COMMAND` with LLAC_MACHINE_DB set to `db`."""
    import os
    env = {**os.environ, "LLAC_MACHINE_DB": str(db)}
    return subprocess.run([sys.executable, "-m", "llac", "-c", command], capture_output=True,
                          text=True, env=env, cwd=cwd, stdin=subprocess.DEVNULL, timeout=60)


@pytest.fixture
def db_path(tmp_path):
    """A database holding machine node1 (a plain run and a run labelled `loaded`, memory 1.5x
    slower) and this machine (one quick run)."""
    path = tmp_path / "machines.sqlite"
    with MachineDB(path) as db:
        db.store(probe_run())
        db.store(probe_run(date="2026-11-23T11:00:00Z", label="loaded", memory_factor=1.5))
        db.store(probe_run(host=this_host(), cpu=this_cpu_model(), quick=True))
    return path


def test_a_stored_run_reads_back_whole(tmp_path):
    run = probe_run()
    with MachineDB(tmp_path / "m.sqlite") as db:
        run_id = db.store(run)
        back = db.run(run_id)
        assert back == run
        assert db.machines() == [("node1", "node1", "Test CPU 9000", 1, run.date)]
        db.store(probe_run(cpu="Other CPU"))           # same host, another CPU: another machine
        assert [m[0] for m in db.machines()] == ["node1", "node1_2"]
        db.delete_run(run_id)
        assert [m[0] for m in db.machines()] == ["node1_2"]


def test_machine_names_are_identifiers():
    assert machine_name("node-17.example.org") == "node_17"
    assert machine_name("7up") == "m7up"


def test_an_old_file_is_migrated_and_a_newer_one_refused(tmp_path):
    old = tmp_path / "old.sqlite"
    sqlite3.connect(old).close()                         # schema 0: an empty SQLite file
    with MachineDB(old) as db:
        db.store(probe_run())
    assert sqlite3.connect(old).execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    newer = tmp_path / "newer.sqlite"
    connection = sqlite3.connect(newer)
    connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    connection.close()
    with pytest.raises(MachineDBError, match="written by a newer llac"):
        MachineDB(newer)
    junk = tmp_path / "junk.sqlite"
    junk.write_text("not a database at all\n" * 100)
    with pytest.raises(MachineDBError, match="not a usable machine database"):
        MachineDB(junk)


def version_1_file(path: Path, rows: str) -> sqlite3.Connection:
    """A database file of schema version 1 at `path` holding machine node1 and its run 1, with
    `rows` (SQL inserts) for the run's parts; the open connection."""
    connection = sqlite3.connect(path)
    connection.executescript(MIGRATIONS[0] + """
        PRAGMA user_version = 1;
        INSERT INTO machine VALUES (1, 'node1', 'node1', 'Test CPU 9000');
        INSERT INTO probe_run VALUES (1, 1, '2026-11-23T10:00:00Z', 0, NULL, 2, 95.0);""" + rows)
    return connection


def test_a_version_1_file_migrates_to_the_current_schema_and_keeps_its_runs(tmp_path):
    path = tmp_path / "v1.sqlite"
    connection = version_1_file(path, """
        INSERT INTO mountain VALUES (1, 'read', 4096, 64, 1e-9, 0.01), (1, 'write', 8192, 8, 2e-9, 0.02);
        INSERT INTO operation VALUES (1, 'timer', 2e-8, 0.02);""")
    with pytest.raises(sqlite3.IntegrityError):            # version 1 refuses the chase
        connection.execute("INSERT INTO mountain VALUES (1, 'chase', 4096, 64, 1e-9, 0)")
    connection.close()
    with MachineDB(path) as db:
        (run,) = db.runs("node1")
        assert [(p.access, p.working_set, p.seconds) for p in run.mountain] == \
            [("read", 4096, 1e-9), ("write", 8192, 2e-9)]
        assert run.operations[0].name == "timer" and run.seconds == 95.0
        chased = probe_run(date="2026-11-23T12:00:00Z")
        db.store(chased)
        assert {p.access for p in db.run(chased.run_id).mountain} == {"read", "write", "chase", "gather"}
        with pytest.raises(sqlite3.IntegrityError):        # the CHECK still refuses others
            db.connection.execute("INSERT INTO mountain VALUES (1, 'jump', 4096, 64, 1e-9, 0)")
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == 4 == SCHEMA_VERSION


def test_a_version_2_file_keeps_its_chase_and_takes_gathers(tmp_path):
    path = tmp_path / "v2.sqlite"
    connection = sqlite3.connect(path)
    connection.executescript(MIGRATIONS[0] + MIGRATIONS[1] + """
        PRAGMA user_version = 2;
        INSERT INTO machine VALUES (1, 'node1', 'node1', 'Test CPU 9000');
        INSERT INTO probe_run VALUES (1, 1, '2026-11-23T10:00:00Z', 0, NULL, 2, 95.0);
        INSERT INTO mountain VALUES (1, 'chase', 4096, 64, 1e-9, 0.01), (1, 'read', 4096, 8, 2e-10, 0.02);""")
    with pytest.raises(sqlite3.IntegrityError):            # version 2 refuses the gather
        connection.execute("INSERT INTO mountain VALUES (1, 'gather', 4096, 64, 1e-9, 0)")
    connection.close()
    with MachineDB(path) as db:
        (run,) = db.runs("node1")
        assert [(p.access, p.stride, p.seconds) for p in run.mountain] == [("chase", 64, 1e-9), ("read", 8, 2e-10)]
        db.connection.execute("INSERT INTO mountain VALUES (1, 'gather', 4096, 64, 1e-9, 0)")
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_a_version_3_files_bsp_rows_read_without_the_bsp_sync_cost_and_new_runs_keep_it(tmp_path):
    """Schema 4 adds the PUB library's empty superstep (L_sync) beside MPI_Barrier's L."""
    path = tmp_path / "v3.sqlite"
    connection = sqlite3.connect(path)
    connection.executescript("".join(MIGRATIONS[:3]) + """
        PRAGMA user_version = 3;
        INSERT INTO machine VALUES (1, 'node1', 'node1', 'Test CPU 9000');
        INSERT INTO probe_run VALUES (1, 1, '2026-11-23T10:00:00Z', 0, NULL, 2, 95.0);
        INSERT INTO bsp VALUES (1, 2, 'large', 1e-10, 0.01, 5e-7, 0.02);""")
    connection.close()
    with MachineDB(path) as db:
        (old,) = db.runs("node1")
        assert [(b.procs, b.L, b.L_sync, b.L_sync_spread) for b in old.bsp] == [(2, 5e-7, None, None)]
        new = probe_run(date="2026-11-23T12:00:00Z")
        new.bsp = [BspPoint(2, "large", 1e-10, 0.01, 5e-7, 0.02, 2e-6, 0.05)]
        db.store(new)
        assert [(b.L_sync, b.L_sync_spread) for b in db.run(new.run_id).bsp] == [(2e-6, 0.05)]
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == 4 == SCHEMA_VERSION


def test_a_migration_that_fails_changes_nothing(tmp_path):
    path = tmp_path / "v1.sqlite"
    connection = sqlite3.connect(path)
    connection.executescript(MIGRATIONS[0] + """
        PRAGMA user_version = 1;
        CREATE VIEW reads AS SELECT * FROM mountain;  -- migration 2's last step (the rename) fails on it
        INSERT INTO machine VALUES (1, 'node1', 'node1', 'Test CPU 9000');
        INSERT INTO probe_run VALUES (1, 1, '2026-11-23T10:00:00Z', 0, NULL, 2, 95.0);
        INSERT INTO mountain VALUES (1, 'read', 4096, 64, 1e-9, 0.01);""")
    connection.close()
    with pytest.raises(MachineDBError, match="not a usable machine database"):
        MachineDB(path)
    connection = sqlite3.connect(path)
    assert connection.execute("PRAGMA user_version").fetchone()[0] == 1
    assert connection.execute("SELECT access, working_set FROM mountain").fetchall() == [("read", 4096)]
    tables = {name for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert "mountain_2" not in tables                       # the steps before it are undone too


def test_list_show_and_compare(db_path):
    done = llac("machine list; machine show node1; machine compare node1 node1@loaded", db_path)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "node1" in out and this_cpu_model() in out
    assert "node1@1 (Test CPU 9000, host node1): full probe" in out     # the run without a label
    assert "other runs: node1@2 (loaded)" in out
    assert "491520" in out                                                # L2 measured at its knee
    memory_row = next(line for line in out.splitlines() if line.startswith("memory "))
    assert memory_row.split()[2] == "30"                                  # ns per read, stride 8
    assert memory_row.split()[-2:] == ["90", "20"]                        # ns per random chase, gather
    ratios = {line.split(",")[0]: line.split()[-1] for line in out.splitlines()
              if line.startswith(("read ", "random "))}
    assert ratios["read memory (134217728 B)"] == "1.5" and ratios["read L1 (16384 B)"] == "1"
    assert ratios["random chase memory (134217728 B)"] == "1.5" == ratios["random gather memory (134217728 B)"]
    writes = [line for line in out.splitlines() if line.startswith("write ")]   # as `show` has them (review 45)
    reads = [line.split(",")[0] for line in out.splitlines() if line.startswith("read ") and "stride 8," in line]
    assert [line.split(",")[0] for line in writes] == [r.replace("read", "write") for r in reads], writes
    assert len(writes) == 4 and writes[-1].split()[-1] == "1.5", writes


def test_a_run_probed_before_the_chase_and_the_gather_shows_none(tmp_path):
    path = tmp_path / "machines.sqlite"
    with MachineDB(path) as db:
        db.store(probe_run())
        old = probe_run(date="2026-11-23T11:00:00Z", label="old", gather=False)
        old.mountain = [p for p in old.mountain if p.access != "chase"]
        db.store(old)
    done = llac("machine show node1@old; machine compare node1 node1@old; machine mountain node1@old", path)
    assert done.returncode == 0, done.stderr
    memory_row = next(line for line in done.stdout.splitlines() if line.startswith("memory "))
    assert memory_row.split()[-2:] == ["-", "-"]
    compared, curves = done.stdout.split("against")[1].split("memory mountain of")
    assert "random" not in curves and not [line for line in compared.splitlines() if line.startswith("random")]
    assert "node1@2 has no random chase curve and no random gather curve: those rows are left out" in compared


def test_a_knee_measured_far_from_the_reported_size_is_named(tmp_path):
    """A quick probe stored L2 measured at 8 MiB for a 1 MiB L2 (review 28): `machine show` and
    `call probe`'s summary say so; a knee near the reported size is not named."""
    from dataclasses import replace
    from call.probe import summary
    run = probe_run()
    near = run.caches
    run.caches = [replace(c, measured_bytes=8 * c.reported_bytes) if c.level == 2 else c for c in near]
    path = tmp_path / "machines.sqlite"
    with MachineDB(path) as db:
        db.store(run)
    done = llac("machine show node1", path)
    assert done.returncode == 0, done.stderr
    assert "L2's knee measured at" in done.stdout and "is 8x the" in done.stdout and "probe again" in done.stdout
    assert "is 8x the" in summary(run, "node1", path)
    assert "knee measured at" not in summary(replace(run, caches=near), "node1", path)


def test_show_without_a_name_is_this_machine(db_path):
    done = llac("machine show", db_path)
    assert done.returncode == 0, done.stderr
    assert f"host {this_host()}): quick probe" in done.stdout


def test_plots_of_the_mountain_and_of_g_and_L(db_path):
    done = llac("machine mountain node1; machine bsp node1", db_path)
    assert done.returncode == 0, done.stderr
    assert "memory mountain of node1@1" in done.stdout and "1e8" in done.stdout
    assert "random chase, 64 B lines" in done.stdout and "random gather, 64 B lines" in done.stdout
    assert "BSP parameters of node1@1 by P" in done.stdout and "L, µs" in done.stdout


def test_the_bsp_plot_has_log_axes_and_both_plots_are_saved_with_to(db_path, tmp_path):
    """A reviewer: on one linear axis the large messages' g (tenths of a ns a byte) lay flat on
    0 under the small messages' (tens) and L; neither plot could be saved."""
    done = llac("machine bsp node1", db_path)
    lines = done.stdout.splitlines()
    ticks = [line.split("┤")[0].strip() for line in lines if "┤" in line]
    ratios = [float(b) / float(a) for a, b in zip(ticks[1:], ticks)]        # top down: a log axis's
    assert len(ticks) >= 3 and min(ratios) > 1 and max(ratios) / min(ratios) < 1.01, ticks   # ticks, a ratio apart
    saved = llac(f'machine mountain node1 to "{tmp_path / "m.html"}"; machine bsp node1 to "{tmp_path / "b.txt"}"; '
                 f'machine bsp node1 to "{tmp_path / "b.txt"}"', db_path)
    assert saved.returncode == 1 and "the file exists; write `replace`" in saved.stderr
    assert "<h1>the memory mountain of node1@1</h1>" in (tmp_path / "m.html").read_text()
    assert "BSP parameters of node1@1 by P" in (tmp_path / "b.txt").read_text()
    refused = llac(f'machine show node1 to "{tmp_path / "s.txt"}"', db_path)    # tables are not saved
    assert refused.returncode == 1 and not (tmp_path / "s.txt").exists()


def test_the_legends_are_below_the_curves_and_p_is_labelled_by_its_values(db_path):
    """A new-user review: the mountain's legend was a box over the curves' top left corner."""
    done = llac("machine mountain node1; machine bsp node1", db_path)
    assert done.returncode == 0, done.stderr
    mountain, bsp = done.stdout.split("BSP parameters")
    for figure, legend in ((mountain, ["x read, stride 8 B", "o read, stride 64 B", "+ read, stride 256 B",
                                       "* write, stride 8 B", "# write, stride 64 B", "% write, stride 256 B",
                                       "& random chase, 64 B lines"]),
                           (bsp, ["x g small, ns/byte", "o g large, ns/byte", "+ L, µs"])):
        lines = figure.splitlines()
        bottom = next(i for i, line in enumerate(lines) if "└" in line)
        assert figure.count("┌") == 1                        # the figure's box only: no legend box
        assert [line for line in lines[bottom + 3:] if line.strip()][:len(legend)] == legend, lines[bottom:]
    lines = bsp.splitlines()
    assert lines[next(i for i, line in enumerate(lines) if "└" in line) + 1].split() == ["1", "2", "4"]


def test_export_and_import_carry_a_machine_to_another_database(db_path, tmp_path):
    path = tmp_path / "node1.json"
    done = llac(f'machine export node1 "{path}"', db_path)
    assert done.returncode == 0 and "2 probe run(s)" in done.stdout, done.stderr
    assert json.loads(path.read_text())["format"] == "llac-machine 1"
    again = llac(f'machine export node1 "{path}"', db_path)
    assert again.returncode == 1 and "exists; to overwrite it" in again.stderr
    other = tmp_path / "other.sqlite"
    done = llac(f'machine import "{path}"; machine import "{path}"', other)
    assert "2 probe run(s) imported" in done.stdout and "0 probe run(s) imported, 2 already there" in done.stdout
    with MachineDB(db_path) as a, MachineDB(other) as b:
        assert [r.mountain for r in a.runs("node1")] == [r.mountain for r in b.runs("node1")]


@pytest.mark.parametrize("command, message", [
    ("machine show nope", "no machine 'nope' in"),
    ("machine show node1@nolabel", "machine node1 has no probe run 'nolabel' (its runs: node1@1, node1@loaded)"),
    ("machine compare node1", "machine compare takes two machines"),
    ("machine list node1", "machine list takes no machine"),
    ('machine export node1@loaded "x.json"', "machine export takes a machine's name and writes all its runs"),
    ("machine frob", "expected 'export', 'import', 'list', 'show', 'compare', 'mountain' or 'bsp', found 'frob'"),
    ('machine import "missing.json"', "cannot read 'missing.json'"),
])
def test_mistakes_get_one_clear_message(db_path, command, message):
    done = llac(command, db_path)
    assert done.returncode == 1
    assert message in done.stderr and "Traceback" not in done.stderr


def machine_file(*runs) -> str:
    """A machine file (`machine export`'s JSON) holding `runs`, each a ProbeRun or a dict."""
    return json.dumps({"format": "llac-machine 1", "name": "node1",
                       "runs": [r if isinstance(r, dict) else asdict(r) for r in runs]})


RUN = '{"format": "llac-machine 1", "runs": [{"host": "h", "cpu_model": "c", "date": "2026-11-23T10:00:00Z", %s}]}'


@pytest.mark.parametrize("document, message", [
    ("{", "not a machine file"),
    ('{"format": "other"}', "not a machine file"),
    ('{"format": "llac-machine 1", "runs": [{"host": "h"}]}', "damaged machine file (run 1: a ProbeRun lacks 'cpu_model', 'date'"),
    ('{"format": "llac-machine 1"}', "damaged machine file (no list of \"runs\")"),
    (RUN % '"quick": false, "bsp": [{"P": 2}]', "a BspPoint has no field 'P'; lacks 'procs'"),
    (RUN % '"quick": false, "label": "has space"', "label 'has space': a label is a name"),
    (RUN % '"quick": false, "label": "2"', "label '2': a label is a name (letters, digits and _, not starting with a digit)"),
    ('{"format": "llac-machine 1", "runs": [{"host": "h", "cpu_model": "c", "date": "2026-11-23T10:00:00Z", "quick": false,'
     ' "operations": [{"name": "timer", "seconds": "fast", "spread": 0}]}]}', "Operation.seconds is 'fast'"),
    ('{"format": "llac-machine 1", "runs": [{"host": "h", "cpu_model": "c", "date": "2026-11-23T10:00:00Z", "quick": false,'
     ' "mountain": [{"access": "jump", "working_set": 4096, "stride": 64, "seconds": 1e-9, "spread": 0}]}]}',
     "MountainPoint.access is 'jump'"),
    (RUN % '"quick": "yes"', "quick must be true or false"),
    (RUN % '"quick": false, "date": "yesterday"', "date 'yesterday' is not an ISO 8601 date"),
    (RUN % '"quick": false, "cores": "two"', "cores is 'two'"),
    (RUN % '"quick": false, "caches": [{"level": 1, "kind": "Data", "reported_bytes": -5, "line_bytes": 64}]',
     "CacheLevel.reported_bytes is -5: it must be > 0"),
    (RUN % '"quick": false, "operations": [{"name": "timer", "seconds": NaN, "spread": 0}]',
     "Operation.seconds is nan, not a number"),
    (RUN % '"quick": false, "bsp": [{"procs": 0, "message": "small", "g": 1, "g_spread": 0, "L": 1, "L_spread": 0}]',
     "BspPoint.procs is 0: it must be > 0"),
    # review 28: an internal error, or stored
    ('{"format": "llac-machine 1", "runs": [null]}', "a ProbeRun is an object of fields, not null"),
    (RUN % '"quick": false, "mountain": 5', "a ProbeRun's 'mountain' is a list, not 5"),
    (RUN % '"quick": false, "mountain": [{"access": "read", "working_set": 1e30, "stride": 64, "seconds": 1e-9, '
     '"spread": 0}]', "MountainPoint.working_set is 1e+30, not a whole number"),
    (RUN % '"quick": false, "bsp": [{"procs": 1.5, "message": "small", "g": 1, "g_spread": 0, "L": 1, "L_spread": 0}]',
     "BspPoint.procs is 1.5, not a whole number"),
    (RUN % '"quick": false, "bsp": [{"procs": 1, "message": "small", "g": 1, "g_spread": 0, "L": 1, "L_spread": 0}, '
     '{"procs": 1, "message": "small", "g": 5, "g_spread": 0, "L": 1, "L_spread": 0}]', "two BspPoints with procs 1, message 'small'"),
    (machine_file(probe_run(host="h"), probe_run(host="k")), "runs of several machines"),
])
def test_a_bad_machine_file_is_refused_and_imports_nothing(tmp_path, document, message):
    path = tmp_path / "bad.json"
    path.write_text(document)
    done = llac(f'machine import "{path}"', tmp_path / "m.sqlite")
    assert done.returncode == 1 and message in done.stderr, done.stderr
    with MachineDB(tmp_path / "m.sqlite") as db:
        assert db.machines() == []


def test_no_database_yet_says_how_to_make_one(tmp_path):
    done = llac("machine list", tmp_path / "none.sqlite")
    assert done.returncode == 1
    assert "no machine database here" in done.stderr and "`call probe`" in done.stderr


def test_machine_show_for_a_program_gives_spreads_as_numbers_and_a_missing_knee_as_null(db_path):
    done = llac("machine show node1@1", db_path)
    assert done.returncode == 0 and re.search(r"^timer\s+20\s+2\.0%$", done.stdout, re.M)
    env = {**os.environ, "LLAC_MACHINE_DB": str(db_path)}
    done = subprocess.run([sys.executable, "-m", "llac", "--format", "json", "-c", "machine show node1@1"],
                          capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL, timeout=60)
    assert done.returncode == 0, done.stderr
    tables = {t["table"].split(":")[0].split(" (")[0]: t for t in map(json.loads, done.stdout.splitlines())}
    assert {"operation": "timer", "ns": 20.0, "spread %": 2.0} in tables["operations"]["rows"]
    assert [row["measured"] for row in tables["caches"]["rows"]] == [None, None, 491520, None]


# ---- review: foreign files, reads that wrote, damaged runs imported, misleading messages

def digest(path) -> str:
    """The file's bytes, hashed: to see that nothing wrote it."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def call_probe_into(db) -> subprocess.CompletedProcess:
    """`call probe --quick --db DB` (refused before it measures anything when DB is unusable)."""
    return subprocess.run([sys.executable, "-m", "call", "probe", "--quick", "--db", str(db)], capture_output=True,
                          text=True, env={**os.environ, "LLAC_MACHINE_DB": str(db)}, stdin=subprocess.DEVNULL,
                          timeout=120)


@pytest.mark.parametrize("schema", ["CREATE TABLE t (x)",
                                    f"PRAGMA user_version = {SCHEMA_VERSION}; CREATE TABLE t (x)"])
def test_another_programs_sqlite_file_is_refused_by_every_command_and_left_unchanged(tmp_path, schema):
    """`machine list` on a foreign SQLite file said "no machine yet" and put llac's tables in it."""
    path = tmp_path / "f.sqlite"
    connection = sqlite3.connect(path)
    connection.executescript(schema)
    connection.close()
    before = digest(path)
    (tmp_path / "m.json").write_text(machine_file(probe_run()))
    for done in (llac("machine list", path), llac(f'machine import "{tmp_path / "m.json"}"', path), call_probe_into(path)):
        assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
        assert f"{path}: not a machine database (it holds t, not llac's tables)" in done.stderr
        assert "probe 1/" not in done.stderr
    for create in (True, False):
        with pytest.raises(MachineDBError, match="left as it is"):
            MachineDB(path, create=create)
    assert digest(path) == before


def test_a_read_never_writes_the_file_and_a_write_migrates_it(tmp_path):
    """Reading an older schema migrates a copy in memory; an empty file stays empty."""
    path = tmp_path / "v1.sqlite"
    version_1_file(path, """
        INSERT INTO mountain VALUES (1, 'read', 4096, 8, 1e-9, 0.01), (1, 'write', 4096, 8, 2e-9, 0.02);""").close()
    before = digest(path)
    done = llac("machine list; machine show node1", path)
    assert done.returncode == 0 and "node1@1 (Test CPU 9000, host node1): full probe" in done.stdout, done.stderr
    with MachineDB(path, create=False) as db:
        assert [r.run_id for r in db.runs("node1")] == [1]
    assert digest(path) == before
    with MachineDB(path) as db:                                # to write: migrated in the file
        db.store(probe_run(date="2026-11-23T12:00:00Z"))
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    empty = tmp_path / "empty.sqlite"
    empty.touch()
    done = llac("machine list", empty)
    assert done.returncode == 0 and "no machine in" in done.stdout and empty.stat().st_size == 0


def test_a_newer_database_says_only_what_helps(tmp_path):
    path = tmp_path / "newer.sqlite"
    sqlite3.connect(path).execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}").connection.close()
    before = digest(path)
    done = llac("machine list", path)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    message = done.stderr.splitlines()[0]
    assert f"written by a newer llac (schema {SCHEMA_VERSION + 1}, this llac knows up to {SCHEMA_VERSION}): " \
           "upgrade llac to use it, or set $LLAC_MACHINE_DB to another database" in message
    assert message.count("LLAC_MACHINE_DB") == 1 and "move" not in message and "call probe" not in message
    assert digest(path) == before


def test_a_database_in_a_missing_folder_says_the_folder_is_missing(tmp_path):
    done = llac("machine list", tmp_path / "nonexist" / "m.sqlite")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert f"no machine database here: the folder {tmp_path / 'nonexist'} does not exist" in done.stderr
    assert "; then `call probe` makes one, measuring this machine" in done.stderr    # the folder alone is not it
    assert not (tmp_path / "nonexist").exists()


def damaged(**changes) -> dict:
    """A whole exported probe run (as `call probe` writes one) with `changes`; a change to
    None deletes the field."""
    run = asdict(probe_run(date="2026-11-24T10:00:00+00:00"))
    run.update(changes)
    return {k: v for k, v in run.items() if v is not None}


WHOLE = asdict(probe_run())


@pytest.mark.parametrize("run, message", [
    (damaged(mountain=None), "its 'mountain' lacks access 'read', 'write', which every probe run measures"),
    (damaged(mountain=[]), "its 'mountain' lacks access 'read', 'write'"),
    (damaged(mountain=[p for p in WHOLE["mountain"] if p["access"] != "write"]), "its 'mountain' lacks access 'write'"),
    (damaged(mountain=WHOLE["mountain"] + WHOLE["mountain"][:1]),
     "two MountainPoints with access 'read', working_set 4096, stride 8"),
    (damaged(operations=WHOLE["operations"] + [{"name": "bogus", "seconds": 1e-9, "spread": 0}]),
     "Operation.name is 'bogus', not one of add_dependent"),
    (damaged(operations=WHOLE["operations"][1:]), "its 'operations' lacks name 'timer'"),
    (damaged(operations=WHOLE["operations"] * 2), "two Operations with name 'timer'"),
    (damaged(caches=WHOLE["caches"][:1] * 2), "two CacheLevels with level 1, kind 'Data'"),
    (damaged(host=""), "host is '', not a non-empty string"),
    (damaged(cpu_model=" "), "cpu_model is ' ', not a non-empty string"),
    (damaged(date="2026-11-24T10:00:00"), "date '2026-11-24T10:00:00' is not an ISO 8601 date and time in UTC"),
    (damaged(date="2026-11-24T10:00:00+02:00"), "date '2026-11-24T10:00:00+02:00' is not an ISO 8601 date and time"),
])
def test_a_damaged_probe_run_is_refused_whole_naming_the_run(db_path, tmp_path, run, message):
    """Review: each of these was stored, and a run without a mountain became node1's default run."""
    path = tmp_path / "node1.json"
    path.write_text(machine_file(probe_run(date="2026-11-20T10:00:00Z"), run))
    with MachineDB(db_path, create=False) as db:
        before = [(r.run_id, r.date) for r in db.runs("node1")]
    done = llac(f'machine import "{path}"', db_path)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert f"{path}: damaged machine file (run 2 (date {run.get('date', '')!r}): {message}" in done.stderr, done.stderr
    with MachineDB(db_path, create=False) as db:
        assert [(r.run_id, r.date) for r in db.runs("node1")] == before


def test_a_whole_run_imports_also_from_a_machine_that_reports_no_caches(tmp_path):
    """`call probe` stores no caches where sysfs reports none: such a run is whole."""
    path = tmp_path / "m.json"
    path.write_text(machine_file(damaged(caches=[]), damaged(date="2026-11-24T11:00:00Z")))
    done = llac(f'machine import "{path}"', tmp_path / "m.sqlite")
    assert done.returncode == 0 and "machine node1: 2 probe run(s) imported" in done.stdout, done.stderr


@pytest.fixture
def immutable(db_path):
    """`db_path` made read-only even for root (chattr +i), undone afterwards; skipped where the
    file system has no such flag."""
    if subprocess.run(["chattr", "+i", str(db_path)], capture_output=True).returncode:
        pytest.skip("chattr +i does not work here")
    yield db_path
    subprocess.run(["chattr", "-i", str(db_path)], check=True)


def test_a_read_only_database_is_refused_before_anything_is_measured_or_imported(immutable, tmp_path):
    """A review: `machine import` into a read-only database gave an internal error
    (OperationalError), and `call probe` said so only after the whole probe."""
    export = tmp_path / "node9.json"
    done = llac(f'machine export node1 "{export}"', immutable)
    assert done.returncode == 0, done.stderr
    export.write_text(export.read_text().replace('"node1"', '"node9"'))
    done = llac(f'machine import "{export}"', immutable)
    assert done.returncode == 1 and "cannot write it: the file is read-only" in done.stderr, done.stderr
    assert "node1" in llac("machine list", immutable).stdout       # reading still works
    done = subprocess.run([sys.executable, "-m", "call", "probe", "--quick", "--db", str(immutable)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "cannot write it: the file is read-only" in done.stderr
    assert "measuring" not in done.stderr and "building the probe" not in done.stderr, done.stderr


def test_a_write_that_fails_after_opening_is_one_machine_db_error(db_path):
    with MachineDB(db_path) as db:
        if subprocess.run(["chattr", "+i", str(db_path)], capture_output=True).returncode:
            pytest.skip("chattr +i does not work here")
        try:
            with pytest.raises(MachineDBError, match="cannot write it"):
                db.store(probe_run(host="node9"))
        finally:
            subprocess.run(["chattr", "-i", str(db_path)], check=True)


def test_compare_gives_the_same_rows_in_either_order_and_show_uses_measured_working_sets(tmp_path):
    """A review: `compare vm node3` gave 17 rows and `compare node3 vm` 11 (node3 without cache
    levels), and `machine show` costed each level at exactly half its size, interpolated,
    where `call probe`'s summary takes the largest working set measured within it."""
    path = tmp_path / "machines.sqlite"
    bare = probe_run(host="node3", cpu="Third CPU")
    bare.caches = []
    with MachineDB(path) as db:
        db.store(probe_run())
        db.store(bare)
    rows = [sorted(line.split(",")[0] for line in llac(f"machine compare {a} {b}", path).stdout.splitlines()
                   if line.startswith(("read", "random")))
            for a, b in (("node1", "node3"), ("node3", "node1"))]
    assert rows[0] == rows[1] and any(r.startswith("read L1") for r in rows[0]), rows
    measured = {p.working_set for p in probe_run().mountain}
    shown = llac("machine show node1", path).stdout.split("memory: ns per access")[1].splitlines()[3:6]
    assert all(line.split()[0].startswith("L") and int(line.split()[1]) in measured for line in shown), shown


def test_a_run_without_bsp_parameters_says_where_they_are_measured(tmp_path):
    """A review: for another machine's run the message suggested `call probe --procs`, which
    measures this machine, not that one."""
    path = tmp_path / "machines.sqlite"
    with MachineDB(path) as db:
        for host, cpu in (("node1", "Test CPU 9000"), (this_host(), this_cpu_model())):
            run = probe_run(host=host, cpu=cpu)
            run.bsp = []
            db.store(run)
    there = llac("machine bsp node1", path)
    assert there.returncode == 1 and ("has no BSP parameters (`call probe --procs 1,2,4` on node1 measures them; "
                                      "`machine export` there and `machine import` here bring them)") in there.stderr
    here = llac("machine bsp", path)
    assert here.returncode == 1 and "has no BSP parameters (`call probe --procs 1,2,4` measures them)" in here.stderr


def test_compare_shows_L_and_bsp_sync_once_per_processor_count(tmp_path):
    """A review: L and bsp_sync were shown twice per P (as `small` and `large`), where neither
    depends on the messages' size."""
    from dataclasses import replace
    path = tmp_path / "machines.sqlite"
    with MachineDB(path) as db:
        for date, sync in (("2026-11-23T10:00:00Z", 2e-6), ("2026-11-24T10:00:00Z", 3e-6)):
            run = probe_run(date=date, label="day" + date[8:10])
            run.bsp = [replace(b, L_sync=sync * b.procs, L_sync_spread=0.01) for b in run.bsp]
            db.store(run)
    done = llac("machine compare node1@day23 node1@day24", path)
    assert done.returncode == 0, done.stderr
    names = [line.split("  ")[0] for line in done.stdout.splitlines() if line.startswith(("L P=", "bsp_sync P="))]
    assert names == ["L P=1, µs", "bsp_sync P=1, µs", "L P=2, µs", "bsp_sync P=2, µs", "L P=4, µs",
                     "bsp_sync P=4, µs"], done.stdout
    assert [line.split()[-1] for line in done.stdout.splitlines() if line.startswith("bsp_sync P=2")] == ["1.5"]
