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
class Table:
    """A titled table of values (numbers are formatted by the renderer)."""
    title: str
    headers: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    footer: tuple[str, ...] = ()


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
