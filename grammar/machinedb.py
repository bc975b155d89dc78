"""The machine database: one SQLite file of machines and their dated probe runs
(docs/machine.md). `call probe` stores runs; llac reads them.

One machine entry per host and CPU model; each probe run belongs to one machine and holds
its caches, memory mountain, operation costs and BSP parameters. The schema is versioned
with SQLite's `user_version`: opening a file to write applies the migrations it lacks, in
order, in one transaction; opening it to read never writes it (an older schema is migrated in
a copy in memory). A file written by a newer llac, or holding another program's tables, is
refused with a clear message and left as it is.
"""
from __future__ import annotations

import os
import sqlite3
from dataclasses import astuple
from pathlib import Path

from .machine import BspPoint, CacheLevel, MountainPoint, Operation, ProbeRun, machine_name
from .outputs import missing_folder

ENVIRONMENT_VARIABLE = "LLAC_MACHINE_DB"

# Migration k brings a file from version k to k + 1. Never edit a released one: add another.
MIGRATIONS = [
    """
    CREATE TABLE machine (
        id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE,
        host TEXT NOT NULL, cpu_model TEXT NOT NULL, UNIQUE (host, cpu_model));
    CREATE TABLE probe_run (
        id INTEGER PRIMARY KEY,
        machine_id INTEGER NOT NULL REFERENCES machine(id) ON DELETE CASCADE,
        date TEXT NOT NULL, quick INTEGER NOT NULL, label TEXT, cores INTEGER, seconds REAL);
    CREATE TABLE cache_level (
        run_id INTEGER NOT NULL REFERENCES probe_run(id) ON DELETE CASCADE,
        level INTEGER NOT NULL, kind TEXT NOT NULL, reported_bytes INTEGER NOT NULL,
        line_bytes INTEGER NOT NULL, measured_bytes INTEGER);
    CREATE TABLE mountain (
        run_id INTEGER NOT NULL REFERENCES probe_run(id) ON DELETE CASCADE,
        access TEXT NOT NULL CHECK (access IN ('read', 'write')),
        working_set INTEGER NOT NULL, stride INTEGER NOT NULL,
        seconds REAL NOT NULL, spread REAL NOT NULL);
    CREATE TABLE operation (
        run_id INTEGER NOT NULL REFERENCES probe_run(id) ON DELETE CASCADE,
        name TEXT NOT NULL, seconds REAL NOT NULL, spread REAL NOT NULL);
    CREATE TABLE bsp (
        run_id INTEGER NOT NULL REFERENCES probe_run(id) ON DELETE CASCADE,
        procs INTEGER NOT NULL, message TEXT NOT NULL CHECK (message IN ('small', 'large')),
        g REAL NOT NULL, g_spread REAL NOT NULL, L REAL NOT NULL, L_spread REAL NOT NULL);
    """,
    # 2: the random pointer chase joins the mountain (access 'chase'). SQLite cannot alter a
    # CHECK: a new table takes the rows, in their order, and the old one's name.
    """
    CREATE TABLE mountain_2 (
        run_id INTEGER NOT NULL REFERENCES probe_run(id) ON DELETE CASCADE,
        access TEXT NOT NULL CHECK (access IN ('read', 'write', 'chase')),
        working_set INTEGER NOT NULL, stride INTEGER NOT NULL,
        seconds REAL NOT NULL, spread REAL NOT NULL);
    INSERT INTO mountain_2 SELECT run_id, access, working_set, stride, seconds, spread
        FROM mountain ORDER BY rowid;
    DROP TABLE mountain;
    ALTER TABLE mountain_2 RENAME TO mountain;
    """,
    # 3: the random gather (independent loads) joins the mountain (access 'gather'), as in 2.
    """
    CREATE TABLE mountain_3 (
        run_id INTEGER NOT NULL REFERENCES probe_run(id) ON DELETE CASCADE,
        access TEXT NOT NULL CHECK (access IN ('read', 'write', 'chase', 'gather')),
        working_set INTEGER NOT NULL, stride INTEGER NOT NULL,
        seconds REAL NOT NULL, spread REAL NOT NULL);
    INSERT INTO mountain_3 SELECT run_id, access, working_set, stride, seconds, spread
        FROM mountain ORDER BY rowid;
    DROP TABLE mountain;
    ALTER TABLE mountain_3 RENAME TO mountain;
    """,
    # 4: the PUB library's empty superstep (bsp_sync) beside MPI_Barrier's L; NULL in older runs.
    """
    ALTER TABLE bsp ADD COLUMN L_sync REAL;
    ALTER TABLE bsp ADD COLUMN L_sync_spread REAL;
    """,
]
SCHEMA_VERSION = len(MIGRATIONS)

# The child tables of a run: table name, the dataclass stored in it, its columns in order.
_PARTS = (
    ("cache_level", CacheLevel, "caches", "level, kind, reported_bytes, line_bytes, measured_bytes"),
    ("mountain", MountainPoint, "mountain", "access, working_set, stride, seconds, spread"),
    ("operation", Operation, "operations", "name, seconds, spread"),
    ("bsp", BspPoint, "bsp", "procs, message, g, g_spread, L, L_spread, L_sync, L_sync_spread"),
)


# The tables of every llac schema: a file whose user_version says llac but that lacks one is not llac's.
_TABLES = {"machine", "probe_run", *(table for table, *_ in _PARTS)}


class MachineDBError(Exception):
    """A machine database that cannot be used: unreadable, not SQLite, not llac's, too new."""


def default_path() -> Path:
    """Where the database lives: $LLAC_MACHINE_DB, else $XDG_DATA_HOME/llac/machines.sqlite,
    else ~/.local/share/llac/machines.sqlite."""
    if os.environ.get(ENVIRONMENT_VARIABLE):
        return Path(os.environ[ENVIRONMENT_VARIABLE])
    data_home = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(data_home) / "llac" / "machines.sqlite"


class MachineDB:
    """An open machine database (use as a context manager, or call close())."""

    def __init__(self, path: Path | str | None = None, create: bool = True):
        """Open the database at `path` (default_path() when None). With `create`, to write it:
        the file is made where there is none and the migrations it lacks are applied to it
        (only the default location's folders are made: a path the user gives must name an
        existing folder, so that a typo does not make a new database). Without, to read it
        only: the file must be there and is never written, so that looking at a database
        cannot change it. Either way a file of a newer llac or of another program is refused."""
        chosen = path is not None or bool(os.environ.get(ENVIRONMENT_VARIABLE))
        self.path = Path(path) if path is not None else default_path()
        if not create and not self.path.exists():
            problem = missing_folder(self.path)
            make = "then `call probe` makes one, measuring" if problem else "`call probe` measures"
            raise MachineDBError(f"{self.path}: no machine database here" + (f": {problem}" if problem else "")
                                 + f"; {make} this machine (${ENVIRONMENT_VARIABLE} names another database)")
        problem = missing_folder(self.path) if chosen else None    # a typo must not make a new database
        if problem:
            raise MachineDBError(f"{self.path}: {problem}")
        if self.path.is_dir():
            raise MachineDBError(f"{self.path}: is a folder, not a database file")
        file_writable = create and self.path.exists() and os.access(self.path, os.W_OK)
        if create and self.path.exists() and not (file_writable and os.access(self.path.parent, os.W_OK)):
            what = "its folder (SQLite writes a journal beside it)" if file_writable else "the file"
            raise MachineDBError(f"{self.path}: cannot write it: {what} is read-only; reading it works "
                                 f"(llac's machine commands), or set ${ENVIRONMENT_VARIABLE} to another database")
        try:
            self.connection = self._connect(write=create)
        except sqlite3.DatabaseError as error:
            raise MachineDBError(
                f"{self.path}: not a usable machine database ({error}); set ${ENVIRONMENT_VARIABLE} to "
                f"another database, or move that file away and run `call probe` to make a new one") from None
        except OSError as error:
            raise MachineDBError(f"{self.path}: cannot open ({error.strerror})") from None

    def __enter__(self) -> MachineDB:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Close the file."""
        self.connection.close()

    def _connect(self, write: bool) -> sqlite3.Connection:
        """A connection at SCHEMA_VERSION: to the file, migrated in place, when `write`; else to
        the file opened read-only when its schema is current, or to a migrated copy of it in
        memory when older (a read must not change the file; the copy is small)."""
        if write:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            connection = sqlite3.connect(self.path)
        else:
            connection = sqlite3.connect(self.path.absolute().as_uri() + "?mode=ro", uri=True)
        try:
            version = self._version(connection)
            if version < SCHEMA_VERSION and not write:
                copy = sqlite3.connect(":memory:")
                connection.backup(copy)
                connection.close()
                connection = copy
            connection.execute("PRAGMA foreign_keys = ON")
            _migrate(connection, version)
        except BaseException:
            connection.close()
            raise
        return connection

    def _version(self, connection: sqlite3.Connection) -> int:
        """The file's schema version, read without writing; MachineDBError when llac must not
        touch the file: written by a newer llac, or holding tables that are not llac's (another
        program's database: a migration would put llac's tables among its own)."""
        version = connection.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise MachineDBError(
                f"{self.path}: written by a newer llac (schema {version}, this llac knows up to "
                f"{SCHEMA_VERSION}): upgrade llac to use it, or set ${ENVIRONMENT_VARIABLE} to another database")
        names = sorted(name for (name,) in connection.execute(
            r"SELECT name FROM sqlite_master WHERE name NOT LIKE 'sqlite\_%' ESCAPE '\'"))
        foreign = bool(names) if version == 0 else not _TABLES <= set(names)
        if foreign:
            shown = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")
            raise MachineDBError(
                f"{self.path}: not a machine database (it holds {shown or 'no table'}, not llac's tables); "
                f"left as it is: set ${ENVIRONMENT_VARIABLE} to another database")
        return version

    # ---- writing
    def store(self, run: ProbeRun) -> int:
        """Store a probe run under its machine (created on first sight); return its id.
        MachineDBError when the file cannot be written (read-only, a full disk)."""
        try:
            return self._store(run)
        except sqlite3.Error as error:
            raise MachineDBError(f"{self.path}: cannot write it ({error})") from None

    def _store(self, run: ProbeRun) -> int:
        with self.connection:
            machine_id = self._machine_id(run.host, run.cpu_model)
            cursor = self.connection.execute(
                "INSERT INTO probe_run (machine_id, date, quick, label, cores, seconds) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (machine_id, run.date, int(run.quick), run.label, run.cores, run.seconds))
            run.run_id = cursor.lastrowid
            for table, _, attribute, columns in _PARTS:
                rows = [(run.run_id, *astuple(item)) for item in getattr(run, attribute)]
                marks = ", ".join("?" * (columns.count(",") + 2))
                self.connection.executemany(
                    f"INSERT INTO {table} (run_id, {columns}) VALUES ({marks})", rows)
        return run.run_id

    def _machine_id(self, host: str, cpu_model: str) -> int:
        """The id of the machine (host, cpu_model), created with a free name if new."""
        row = self.connection.execute(
            "SELECT id FROM machine WHERE host = ? AND cpu_model = ?", (host, cpu_model)).fetchone()
        if row:
            return row[0]
        base = name = machine_name(host)
        taken = {r[0] for r in self.connection.execute("SELECT name FROM machine")}
        suffix = 2
        while name in taken:
            name, suffix = f"{base}_{suffix}", suffix + 1
        return self.connection.execute(
            "INSERT INTO machine (name, host, cpu_model) VALUES (?, ?, ?)",
            (name, host, cpu_model)).lastrowid

    def delete_run(self, run_id: int) -> None:
        """Remove one probe run (and a machine left without runs)."""
        with self.connection:
            self.connection.execute("DELETE FROM probe_run WHERE id = ?", (run_id,))
            self.connection.execute(
                "DELETE FROM machine WHERE id NOT IN (SELECT machine_id FROM probe_run)")

    # ---- reading
    def machines(self) -> list[tuple[str, str, str, int, str | None]]:
        """Every machine: (name, host, cpu_model, number of runs, date of the latest)."""
        return self.connection.execute(
            "SELECT m.name, m.host, m.cpu_model, COUNT(r.id), MAX(r.date) FROM machine m "
            "LEFT JOIN probe_run r ON r.machine_id = m.id GROUP BY m.id ORDER BY m.name").fetchall()

    def machine_named(self, name: str) -> tuple[str, str] | None:
        """(host, cpu_model) of the machine called `name`, or None."""
        return self.connection.execute(
            "SELECT host, cpu_model FROM machine WHERE name = ?", (name,)).fetchone()

    def machine_of(self, host: str, cpu_model: str) -> str | None:
        """The name of the machine (host, cpu_model), or None when it was never probed."""
        row = self.connection.execute(
            "SELECT name FROM machine WHERE host = ? AND cpu_model = ?", (host, cpu_model)).fetchone()
        return row[0] if row else None

    def runs(self, name: str) -> list[ProbeRun]:
        """Every probe run of machine `name`, oldest first."""
        ids = self.connection.execute(
            "SELECT r.id FROM probe_run r JOIN machine m ON m.id = r.machine_id "
            "WHERE m.name = ? ORDER BY r.date, r.id", (name,)).fetchall()
        return [self.run(run_id) for (run_id,) in ids]

    def run(self, run_id: int) -> ProbeRun:
        """The probe run with this id, whole."""
        host, cpu, date, quick, label, cores, seconds = self.connection.execute(
            "SELECT m.host, m.cpu_model, r.date, r.quick, r.label, r.cores, r.seconds "
            "FROM probe_run r JOIN machine m ON m.id = r.machine_id WHERE r.id = ?",
            (run_id,)).fetchone()
        run = ProbeRun(host, cpu, date, bool(quick), label, cores, seconds, run_id=run_id)
        for table, kind, attribute, columns in _PARTS:
            rows = self.connection.execute(
                f"SELECT {columns} FROM {table} WHERE run_id = ? ORDER BY rowid", (run_id,))
            setattr(run, attribute, [kind(*row) for row in rows])
        return run


def _migrate(connection: sqlite3.Connection, version: int) -> None:
    """Bring the database of `connection` from schema `version` to SCHEMA_VERSION in one
    transaction, so that a migration that fails changes nothing."""
    if version == SCHEMA_VERSION:
        return
    with connection:
        connection.execute("BEGIN")    # else each CREATE, DROP and ALTER commits alone
        for script in MIGRATIONS[version:]:
            for statement in filter(str.strip, script.split(";")):
                connection.execute(statement)
        connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
