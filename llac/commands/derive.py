"""Commands that make a new experiment from others: NAME = ..., where, with, merge, aggregate,
formula (the table operations they use are in `llac.tables`)."""
from __future__ import annotations

import itertools

import numpy as np

from cll_grammar.formula import BinOp, walk
from cll_grammar.span import suggest
from llac import ast
from llac.commands import command
from llac.commands.results import Note, Produced
from llac.errors import LlacError
from llac.fit_data import AGGREGATES
from llac.parse import checked_formula
from llac.tables import aggregate_experiment, column_values, excluded_records, merge_experiments, shared_records
from llac.numbers import number_text

COMPARISONS = ("<", "<=", "==", "!=", ">=", ">")


@command("=", "NAME = SOURCE", """Name the result of an object-making command (where, with,
         merge, aggregate, formula, fit, drop) or copy an object: `b = a`. Giving an existing
         name replaces that object (and an experiment's stale model).""",
         ["small = colinit where N <= 512", "c2 = colinit"], ast.Assign, starts_statement=False)
def assign(session, statement: ast.Assign):
    produced = session.produce(statement.source)
    return [*produced.notes, session.store(statement.target.text, produced.obj)]


@command("copy", "NAME = OBJECT", "Copy an object under a new name.", ["backup = colinit"],
         ast.Copy, starts_statement=False)
def copy(session, source: ast.Copy):
    return Produced(session.get(source.obj))


@command("where", "NAME = EXPERIMENT where CONDITION", """Keep the records where the condition
         holds (comparisons < <= == != >= >, and, or, not, arithmetic over columns). A condition
         that selects nothing is an error and makes no object; a compared value that is not
         finite (NaN, inf) at a record kept is a warning, as in `with`.""",
         ["small = colinit where N <= 512 and rank == 0"], ast.Where, starts_statement=False)
def where(session, source: ast.Where):
    experiment = session.experiment(source.obj)
    mask = column_values(experiment, source.condition, source.span)
    if np.asarray(mask).dtype != bool:
        raise LlacError("a where condition must compare, e.g. N <= 512", source.span)
    mask = np.broadcast_to(mask, (len(experiment),))
    if not mask.any():
        raise LlacError(f"the condition selects none of the {len(experiment)} records of "
                        f"{experiment.name}; nothing was created", source.span)
    kept = experiment.select(mask)
    return Produced(kept, _compared_not_finite(kept, source))


def _compared_not_finite(kept, source: ast.Where) -> tuple:
    """A warning for the first compared value that is not finite at some record `kept` (`time/0
    > 1`: inf passes every `>`), as `with` warns of such a column. Records left out are not
    looked at: `N > 100 and log(N - 100) < 10` guards its log."""
    for node in walk(source.condition):
        if isinstance(node, BinOp) and node.op in COMPARISONS:
            for operand in (node.left, node.right):
                values = np.broadcast_to(column_values(kept, operand, source.span), (len(kept),))
                if note := _not_finite_note(kept, f"{operand} (compared)", values):
                    return (note,)
    return ()


def _not_finite_note(experiment, label: str, values: np.ndarray) -> Note | None:
    """A warning saying how many of `values` (computed over the records of `experiment`) are
    NaN or inf, and at which record the first is; None when all are finite."""
    bad = np.flatnonzero(~np.isfinite(values.astype(float)))
    if not len(bad):
        return None
    first = ", ".join(f"{c}={number_text(experiment.columns[c][bad[0]])}"
                      for c in (*experiment.formula.variables, "time") if c in experiment.columns)
    return Note(f"{label}: {len(bad)} of {len(experiment)} values are not finite (NaN or inf; the log of a "
                f"number <= 0, a division by zero ...), the first at {first}", warning=True)


@command("with", "NAME = EXPERIMENT with COLUMN = EXPR [, COLUMN = EXPR ...]", """Add or replace
         columns computed from the others (in order, so a later one may use an earlier one).""",
         ["us = colinit with time = time * 1e6", "b = a with bytes = N*N*8"], ast.With,
         starts_statement=False)
def with_(session, source: ast.With):
    experiment = session.experiment(source.obj)
    notes = []
    for name, expr in source.definitions:
        values = np.broadcast_to(column_values(experiment, expr, source.span), (len(experiment),))
        if note := _not_finite_note(experiment, name.text, values):
            notes.append(note)
        experiment = experiment.with_column(name.text, values)
        if name.text == "time" and experiment.working_set is not None:
            # a counter or another measure fitted as time: memory costs in seconds do not apply
            experiment = experiment.replace(working_set=None, header={
                k: v for k, v in experiment.header.items() if k != "bytes"})
            notes.append(Note("time is redefined: the working set is dropped (cache-aware "
                              "predictions are of time)"))
    return Produced(experiment, tuple(notes))


@command("merge", "NAME = merge A, B [, ...]", """Put the records of experiments that share a
         formula into one (e.g. runs on different machines or processor counts). Experiments
         that share records (overlapping subsets of one, a copy `with` a column) are refused:
         their records would count twice.""",
         ["both = merge run1, run2"], ast.Merge)
def merge(session, source: ast.Merge):
    names = (source.obj, *source.others)
    for i, name in enumerate(names):
        if name.text in (n.text for n in names[:i]):
            raise LlacError(f"{name.text} is named twice: its records would count twice", name.span)
    experiments = [session.experiment(n) for n in names]
    for name, experiment in zip(source.others, experiments[1:]):
        if str(experiment.formula) != str(experiments[0].formula):
            raise LlacError(f"cannot merge {source.obj.text} ({experiments[0].formula}) with "
                            f"{name.text} ({experiment.formula}): their formulas differ", name.span)
    for i, j in itertools.combinations(range(len(names)), 2):
        if shared := shared_records(experiments[i], experiments[j]):
            raise LlacError(f"{names[i].text} and {names[j].text} share {shared} of their records (read from "
                            f"{experiments[i].origin or 'the same data'}): merged, they would count twice; "
                            f"merge parts that do not overlap (split one with `where C` and `where not C`)",
                            names[j].span)
    return Produced(merge_experiments(experiments))


@command("aggregate", "NAME = aggregate EXPERIMENT [by median|min|mean]", """One record per
         sample point (distinct values of the formula's variables), its time the median (or
         min, mean) of the repetitions; a `count` column says how many there were. As in a fit,
         records whose time is NaN, inf or not positive are left out, with a warning that
         counts them and names the sample points left with no record, which the aggregate
         lacks.""",
         ["agg = aggregate colinit by min"], ast.Aggregate)
def aggregate(session, source: ast.Aggregate):
    experiment = session.experiment(source.obj)
    method = source.method.text if source.method else "median"
    if method not in AGGREGATES:
        raise LlacError(f"aggregate by {' or '.join(AGGREGATES)}, not {method!r}"
                        f"{suggest(method, AGGREGATES)}", source.method.span)
    aggregated = aggregate_experiment(experiment, method, source.span)
    left_out = excluded_records(experiment)     # as the fit says it
    return Produced(aggregated, (Note(left_out, warning=True),) if left_out else ())


@command("formula", 'NAME = EXPERIMENT formula "FORMULA"', """The same records with another
         formula to try; its variables must be columns that are variables: not the time the
         formula models, nor what each record measures besides it (rank, thread, the MPI
         columns, hardware counters), which `with` can copy into a column of its own.""",
         ['g = colinit formula "colinit[0] + colinit[1]*N*N"'], ast.Reformulate, starts_statement=False)
def reformulate(session, source: ast.Reformulate):
    experiment = session.experiment(source.obj)
    formula = checked_formula(source.formula, source.formula_span)
    for variable in formula.variables:
        if variable not in experiment.columns:
            raise LlacError(f"the formula uses {variable!r}, which is not a column of {experiment.name}"
                            f"{suggest(variable, experiment.columns)}", _variable_span(source, variable))
    refuse_measured_variables(experiment, formula, source)
    return Produced(experiment.replace(formula=formula))


def refuse_measured_variables(experiment, formula, source) -> None:
    """LlacError, located in `source`'s formula string (a `formula` command or a CSV `load`),
    when the formula takes as a variable a column each record measures (the time itself,
    rank, thread, the MPI columns, counters): fitted against itself the time fits perfectly
    and means nothing. (A CSV experiment's header formula is the user's, so the record
    columns are refused by name as well.)"""
    for variable in formula.variables:
        if variable in experiment.columns and variable not in experiment.variable_columns:
            what = "the time the formula models" if variable == "time" else \
                f"measured with the time of each record of {experiment.name}"
            copy = "" if variable == "time" else (f"; to model the time against it anyway, copy it first: "
                                                  f"x = {experiment.name} with {variable}_ = {variable}")
            raise LlacError(f"{variable!r} is {what}, not a variable: a formula's variables are the program's "
                            f"({', '.join(experiment.variable_columns) or 'none'}){copy}",
                            _variable_span(source, variable))


def _variable_span(source: ast.Reformulate | ast.Load, name: str) -> ast.Span:
    """Where the variable `name` first appears inside the formula string of `source`."""
    from cll_grammar.formula import Variable, parse_expression
    first = min((n.span.column for n in walk(parse_expression(source.formula))
                 if isinstance(n, Variable) and n.name == name), default=1)
    span = source.formula_span
    return ast.Span(span.line, span.column + first, span.line, span.column + first + len(name))
