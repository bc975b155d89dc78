"""The llac command language as immutable objects, each carrying its source span.

Built by `llac.parse` from the parse tree; executed by the handlers in the command
registry. Nothing here runs anything.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from cll_grammar.formula import Node
from cll_grammar.span import Span


@dataclass(frozen=True)
class Name:
    """An object, column, setting or option name as written, with its span."""
    text: str
    span: Span = field(compare=False)

    def __str__(self):
        return self.text


@dataclass(frozen=True)
class Statement:
    """Base of all commands: `span` covers the whole statement."""
    span: Span = field(compare=False, kw_only=True)


# ---------------------------------------------------------------- commands that report or act

@dataclass(frozen=True)
class Load(Statement):
    paths: tuple[str, ...]
    name: Name | None = None
    formula: str | None = None
    formula_span: Span | None = None


@dataclass(frozen=True)
class List(Statement):
    pass


@dataclass(frozen=True)
class Show(Statement):
    obj: Name
    limit: int | None = None


@dataclass(frozen=True)
class Describe(Statement):
    obj: Name


@dataclass(frozen=True)
class Rename(Statement):
    old: Name
    new: Name


@dataclass(frozen=True)
class Delete(Statement):
    objs: tuple[Name, ...]


@dataclass(frozen=True)
class Set(Statement):
    setting: Name | None = None
    value: str | None = None
    value_span: Span | None = None     # where the value stands, for its errors


@dataclass(frozen=True)
class Point:
    """`N=1024..65536 *2`: a variable and the values to predict at."""
    var: Name
    values: tuple[float, ...]


@dataclass(frozen=True)
class Predict(Statement):
    obj: Name
    points: tuple[Point, ...] = ()
    machine: Name | None = None       # `on MACHINE`: the machine-aware prediction on another machine
    parameters: tuple[tuple[str, float], ...] = ()   # `with g=..., L=...`: BSP parameters to use


@dataclass(frozen=True)
class PredictLast(Statement):
    """`predict` alone: the last model fitted, at its measured points."""


@dataclass(frozen=True)
class FitAll(Statement):
    """`fit` alone: fit every experiment loaded, one compact report each."""


@dataclass(frozen=True)
class Report(Statement):
    """`report`: one table that summarises every experiment's model."""


@dataclass(frozen=True)
class Suggest(Statement):
    """`suggest f`: rank canonical formulas by their predictions of f's largest points."""
    obj: Name


@dataclass(frozen=True)
class PredictAt(Statement):
    obj: Name
    data: Name
    machine: Name | None = None


@dataclass(frozen=True)
class PredictTable(Statement):
    """`predict f at test by P`: the CALL paper's Table 3 layout, one row per value of `procs`."""
    obj: Name
    data: Name
    procs: Name


@dataclass(frozen=True)
class Plot(Statement):
    obj: Name
    vs: Name | None = None
    by: Name | None = None
    scale: str = "linear"
    residuals: bool = False
    path: str | None = None       # `to "file.txt"` / `to "page.html"`: save instead of showing
    replace: bool = False         # `to "file" replace`: overwrite an existing file


@dataclass(frozen=True)
class Export(Statement):
    obj: Name
    path: str
    format: Name | None = None
    replace: bool = False


@dataclass(frozen=True)
class Help(Statement):
    topic: Name | None = None


@dataclass(frozen=True)
class Machine(Statement):
    """`machine ACTION ...`: the machine database (list, show, compare, mountain, bsp, export,
    import); `names` are machine references, `path` the file of export and import."""
    action: str
    names: tuple[Name, ...] = ()
    path: str | None = None
    replace: bool = False


@dataclass(frozen=True)
class ParallelReport(Statement):
    """A P3T+ parameter report of a parallel experiment, `by` rank, thread or P; `plot` draws it
    (to the file `path` when given, kept unless `replace`)."""
    obj: Name
    by: Name | None = None
    plot: bool = False
    path: str | None = None
    replace: bool = False


@dataclass(frozen=True)
class Balance(ParallelReport):
    """`balance f by rank`: the work distribution across ranks (threads) and its goodness."""


@dataclass(frozen=True)
class Comm(ParallelReport):
    """`comm f by P`: transfers, data transferred, partners, communication and computation time."""


@dataclass(frozen=True)
class Obsp(Statement):
    """`obsp fft sum on node1 with g=2e-9, L=5e-6`: the OBSP* and BSP predictions of a PUB
    program's supersteps; `combine` is formula (3)'s @ (max or sum)."""
    obj: Name
    combine: str = "max"
    machine: Name | None = None
    parameters: tuple[tuple[str, float], ...] = ()
    data: Name | None = None          # `at DATA`: predict DATA's sizes from obj's runs (Table 3)


@dataclass(frozen=True)
class Timeline(Statement):
    """`timeline f P=2 N=1024 model with g=5e-7, L=5e-4 to "t.html"`: one PUB run's
    per-processor superstep timeline, measured or (`model`) as OBSP* sees it; `selectors` pick
    the run (P, run, or a variable of the sync experiment)."""
    obj: Name
    selectors: tuple[tuple[Name, float], ...] = ()
    model: bool = False
    combine: str = "max"
    machine: Name | None = None
    parameters: tuple[tuple[str, float], ...] = ()
    path: str | None = None       # `to "file.txt"` / `to "page.html"`: save instead of showing
    replace: bool = False


# ---------------------------------------------------------------- commands that make an object

@dataclass(frozen=True)
class Source(Statement):
    """A command whose result is a new object; `obj` is the object it starts from."""
    obj: Name

    def default_target(self, objects: Mapping[str, object]) -> str | None:
        """The name the result gets when no `NAME =` is written (None: a target is required),
        given the session's `objects`."""
        return None


@dataclass(frozen=True)
class Copy(Source):
    pass


@dataclass(frozen=True)
class Where(Source):
    condition: Node


@dataclass(frozen=True)
class With(Source):
    definitions: tuple[tuple[Name, Node], ...]


@dataclass(frozen=True)
class Merge(Source):
    others: tuple[Name, ...]


@dataclass(frozen=True)
class Aggregate(Source):
    method: Name | None = None


@dataclass(frozen=True)
class Reformulate(Source):
    formula: str
    formula_span: Span


@dataclass(frozen=True)
class Fit(Source):
    def default_target(self, objects):
        return f"{self.obj.text}.model"


@dataclass(frozen=True)
class Drop(Source):
    constants: tuple[tuple[Name, int], ...] = ()

    def default_target(self, objects):
        """EXPERIMENT.model for an experiment (or its model); a model kept under another
        name (`m = fit colinit`) is replaced under that name."""
        from llac.experiment import Experiment
        name = self.obj.text
        if name.endswith(".model") or isinstance(objects.get(name, Experiment), Experiment):
            return f"{name.removesuffix('.model')}.model"
        return name


@dataclass(frozen=True)
class Assign(Statement):
    target: Name
    source: Source
