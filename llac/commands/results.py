"""What commands return: plain data that `llac.render` turns into text. No formatting here."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Note:
    """One line of news: 'created small (128 records)'; warnings go to stderr in scripts."""
    text: str
    warning: bool = False


@dataclass(frozen=True)
class Percent:
    """A table cell holding a fraction that people read as a percentage ('7.21%', `digits`
    decimals); `llac --format csv|json` writes it in percent at full precision, under its
    column's name with ' %' added. A fraction that does not exist is NaN (shown as '-', null
    in JSON), not None, so that the column keeps its name when no row has one."""
    fraction: float
    digits: int = 2


class Exact(float):
    """A table cell holding a number someone gave (the values `predict` was asked for): shown
    in full, the shortest text that reads back the same double, where other numbers are
    rounded to 4 significant digits (`N=1000.25` is not `1000`). A float everywhere else."""


@dataclass(frozen=True)
class Table:
    """A titled table of values (numbers are formatted by the renderer; None is a value that
    does not exist, '-' in text, empty in CSV, null in JSON). Every column has a name.
    `machine`: (headers, rows) for `llac --format csv|json` when the text's layout does not
    suit a program (the report's constants in one text cell become one row per constant)."""
    title: str
    headers: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    footer: tuple[str, ...] = ()
    machine: tuple[tuple[str, ...], tuple[tuple[Any, ...], ...]] | None = None

    def __post_init__(self):
        unnamed = [h for h in (*self.headers, *(self.machine[0] if self.machine else ())) if not h]
        if unnamed:
            raise ValueError(f"table {self.title!r} has a column without a name")


@dataclass(frozen=True)
class ModelReport:
    """A fitted model to show: its constants, intervals, cuts, errors and warnings.
    `droppable`: the constants a `drop` would remove without making the fit worse (the hint;
    None when not checked, as in `show`); `compact`: one line per interval instead of the full
    statistics (`fit` of everything)."""
    name: str
    model: Any
    droppable: tuple[str, ...] | None = None
    compact: bool = False


@dataclass(frozen=True)
class Text:
    """Preformatted text: a plot, the help."""
    body: str


@dataclass(frozen=True)
class Produced:
    """What an object-making command hands back before it is stored under a name."""
    obj: Any
    notes: tuple = field(default=())
