"""A llac session: the named objects (experiments, models) and the fitting settings.

A Session never prints. `execute` parses source text and yields result objects
(`llac.commands.results`) statement by statement; `llac.render` turns them into text.
Errors a user can cause are raised as `LlacError`, located in the source; the domain errors
of the layers below (data readers, formulas, fits) are converted to it here, in `run`.
"""
from __future__ import annotations

from typing import Iterator

from cll_grammar.formula import FormulaError
from cll_grammar.span import suggest
from llac import ast
from llac.commands import handler_for, keywords
from llac.commands.results import Note, Produced
from llac.errors import InputError, LlacError
from llac.experiment import Experiment
from llac.fit_data import FitError
from llac.parallel import ParallelError
from llac.parse import parse

# the errors of the layers below the commands (data files, formulas, fits, parallel tables):
# `run` turns them into LlacError, located at the statement, so handlers need not
DOMAIN_ERRORS = (InputError, FormulaError, FitError, ParallelError)


class Session:
    """Named objects and settings; runs statements and returns what they produced."""

    def __init__(self):
        self.objects: dict[str, object] = {}
        self.changed_settings: dict[str, object] = {}
        self.last_model: str | None = None    # what `predict` alone predicts with
        self.supersteps: dict[str, dict[int, object]] = {}   # program -> P -> its PUB supersteps (obsp)
        # (program, P, execution) -> those supersteps, of every execution loaded (the experiments
        # loaded from one find theirs: llac.commands.obsp.superstep_traces)
        self.executions: dict[tuple[str, int, str], object] = {}

    # ---------------------------------------------------------------- running
    def execute(self, source: str) -> Iterator[object]:
        """Parse `source` (all of it, so a syntax error stops before anything runs), then run
        each statement in turn, yielding its results. Raises LlacError at the first error."""
        for statement in parse(source, keywords()):
            yield from self.run(statement)

    def run(self, statement: ast.Statement) -> list:
        """Run one statement through the command registry; returns its results. A statement
        cut short by Ctrl-C (KeyboardInterrupt) or an internal error leaves the objects and
        settings as they were, so no half-made object survives it. A domain error
        (DOMAIN_ERRORS) becomes a LlacError with its message, located at the statement."""
        if isinstance(statement, ast.Source):
            target = statement.default_target(self.objects)
            if target is None:
                raise LlacError("this command makes a new object: write NAME = ... to name it",
                                statement.span)
            statement = ast.Assign(ast.Name(target, statement.obj.span), statement, span=statement.span)
        objects, settings = dict(self.objects), dict(self.changed_settings)
        supersteps = {name: dict(runs) for name, runs in self.supersteps.items()}
        executions = dict(self.executions)
        try:
            return list(handler_for(statement).handler(self, statement) or ())
        except LlacError as err:
            raise err.at(statement.span)
        except DOMAIN_ERRORS as err:
            raise LlacError(str(err), statement.span) from None
        except BaseException:   # Ctrl-C or an internal error: the statement leaves nothing behind
            self.objects, self.changed_settings, self.supersteps = objects, settings, supersteps
            self.executions = executions
            raise

    def produce(self, source: ast.Source) -> Produced:
        """Run an object-making command and return its (not yet stored) result."""
        return handler_for(source).handler(self, source)

    # ---------------------------------------------------------------- objects
    def get(self, name: ast.Name):
        """The object called `name`, or an error that suggests the nearest name."""
        if name.text in self.objects:
            return self.objects[name.text]
        known = ", ".join(sorted(self.objects)) or "none yet: use load"
        raise LlacError(f"no object called {name.text!r}{suggest(name.text, self.objects)}"
                        f" (objects: {known})", name.span)

    def experiment(self, name: ast.Name) -> Experiment:
        """The experiment called `name` (a model is refused, naming its experiment)."""
        obj = self.get(name)
        if not isinstance(obj, Experiment):
            raise LlacError(f"{name.text!r} is a model, not an experiment; use its experiment "
                            f"{obj.name!r}", name.span)
        return obj

    def store(self, name: str, obj, verb: str | None = None) -> Note:
        """Keep `obj` under `name`; a replaced experiment's stale model is removed. The news
        says `verb` (default: created or replaced) NAME: what it is. `X.model` holds X's model
        and nothing else (predict, plot and report look X's model up there), so anything else
        under that name is refused."""
        _check_model_name(name, obj)
        replaced = name in self.objects
        if isinstance(obj, Experiment):
            obj = obj.replace(name=name)
            self.objects.pop(f"{name}.model", None)
        else:
            self.last_model = name
        self.objects[name] = obj
        return Note(f"{verb or ('replaced' if replaced else 'created')} {name}: {describe_object(obj)}")

    def columns(self) -> tuple[str, ...]:
        """Every column name of every experiment (for completion)."""
        return tuple(dict.fromkeys(c for o in self.objects.values() if isinstance(o, Experiment)
                                   for c in o.column_names))

    # ---------------------------------------------------------------- settings
    def fit_settings(self):
        """The current settings as the fitting helper's FitSettings."""
        from llac.model import FitSettings
        return FitSettings(**self.changed_settings)

    def change_setting(self, name: ast.Name, text: str, where: ast.Span | None = None) -> object:
        """Validate and set one setting from its text (5%, 0.05, 3, on, min), which stands at
        `where`; returns the value."""
        from llac.settings import DEFAULTS, check_test_size, setting_value
        if name.text not in DEFAULTS:
            raise LlacError(f"no setting called {name.text!r}{suggest(name.text, DEFAULTS)} "
                            f"(settings: {', '.join(DEFAULTS)})", name.span)
        try:
            value = setting_value(name.text, text)
        except LlacError as error:
            raise error.at(where) from None
        if name.text in ("alpha", "bootstrap"):
            check_test_size({**DEFAULTS, **self.changed_settings, name.text: value}, name.text)
        self.changed_settings[name.text] = value
        return value


def _check_model_name(name: str, obj) -> None:
    """Refuse to keep under `X.model` anything but a model of experiment X."""
    if not name.endswith(".model"):
        return
    owner = name.removesuffix(".model")
    if isinstance(obj, Experiment):
        raise LlacError(f"{name} is the name of {owner}'s model: an experiment cannot be called so; "
                        f"choose a name without .model")
    if obj.name != owner:
        raise LlacError(f"{name} is the name of {owner}'s model, and this is a model of {obj.name}: "
                        f"call it {obj.name}.model or a name without .model (m = fit {obj.name})")


def describe_object(obj) -> str:
    """A one-line summary of an object: records and formula, or a model's intervals."""
    if isinstance(obj, Experiment):
        return f"{len(obj)} records, {obj.formula}"
    return f"model of {obj.name}, {len(obj.pieces)} interval{'s' * (len(obj.pieces) != 1)}, {obj.formula}"
