"""Operations on experiments shared by the commands and the fit: evaluate an expression over the
columns, count the repetitions at each sample point, aggregate them, merge experiments.

Grouping records into sample points is done once, by `llac.fit_data.group_rows`."""
from __future__ import annotations

import numpy as np

from cll_grammar.formula import Variable, evaluate, walk
from cll_grammar.span import suggest
from llac import ast
from llac.errors import LlacError
from llac.experiment import Experiment, Source
from llac.fit_data import FitError, aggregate_points, excluded_text, group_rows, valid_times
from llac.noise import NAMED
from llac.numbers import number_text


def column_values(experiment: Experiment, node, span: ast.Span):
    """Evaluate an expression over the experiment's columns; an unknown column is an error
    located at its place in the statement, with the nearest column suggested."""
    try:
        return evaluate(node, experiment.columns)
    except KeyError as err:
        name = err.args[0]
        where = next((n.span for n in walk(node) if isinstance(n, Variable) and n.name == name), None)
        raise LlacError(f"{experiment.name} has no column {name!r}{suggest(name, experiment.columns)}"
                        f" (columns: {', '.join(experiment.columns)})", where or span) from None


def repetitions(experiment: Experiment) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """The sample points (distinct values of the formula's variables, variable -> values) and
    how many records each has, of the records a fit uses (`valid_times`: NaN, inf and
    non-positive times are left out, and a point with no other record with them) (`describe`)."""
    variables = experiment.formula.variables
    valid = valid_times(experiment.columns["time"]) if len(experiment) else np.zeros(0, dtype=bool)
    if not valid.any():
        return {v: np.zeros(0) for v in variables}, np.zeros(0, dtype=np.intp)
    keys = [np.asarray(experiment.columns[v], dtype=float)[valid] for v in variables]
    group, first = group_rows(keys, int(valid.sum()))
    return {v: k[first] for v, k in zip(variables, keys)}, np.bincount(group, minlength=len(first))


def excluded_records(experiment: Experiment) -> str | None:
    """What a fit of `experiment` leaves out, in the fit's words (`excluded_text`: '4 records
    excluded: NaN, inf or non-positive time'), naming the sample points left with no record,
    which no aggregate or fit has (at most NAMED of them); None when every record counts."""
    time = np.asarray(experiment.columns["time"], dtype=float)
    valid = valid_times(time)
    excluded = int(len(time) - valid.sum())
    if not excluded:
        return None
    text = excluded_text(excluded)
    variables = experiment.formula.variables
    if not variables or not valid.any():
        return text
    keys = [np.asarray(experiment.columns[v], dtype=float) for v in variables]
    group, first = group_rows(keys, len(time))
    empty = np.flatnonzero(np.bincount(group, weights=valid.astype(float), minlength=len(first)) == 0)
    if not len(empty):
        return text
    names = ", ".join(" ".join(f"{v}={number_text(k[first[i]])}" for v, k in zip(variables, keys))
                      for i in empty[:NAMED]) + (f" and {len(empty) - NAMED} more" if len(empty) > NAMED else "")
    return text + (f"; sample point {names} has only such records and is left out" if len(empty) == 1 else
                   f"; {len(empty)} sample points have only such records and are left out: {names}")


def aggregate_experiment(experiment: Experiment, method: str = "median",
                         span: ast.Span | None = None) -> Experiment:
    """One record per sample point with the `method` of its valid times and a `count` column:
    the same grouping and summary the fit uses (`llac.fit_data.aggregate_points`)."""
    if not len(experiment.columns["time"]):
        raise LlacError(f"cannot aggregate {experiment.name}: it has no records", span)
    try:
        points = aggregate_points(experiment.formula, experiment.columns, method)
    except FitError as err:
        raise LlacError(f"cannot aggregate {experiment.name}: {err}", span) from None
    return experiment.replace(columns={**points.variables, "time": points.time, "count": points.count})


def merge_experiments(experiments: list[Experiment]) -> Experiment:
    """The records of all `experiments` (same formula) in one; columns they all have. The
    header holds the fields all their files agree on (a field one file lacks or gives
    otherwise is left out: no file's value stands for the whole), except that `mpi_uncounted`
    lists what any of them did not count; the working set is theirs when they all state the
    same one, else None; `sources` lists every file with its own header and records."""
    first = experiments[0]
    if len(experiments) == 1:
        return first
    names = [c for c in first.column_names if all(c in e.columns for e in experiments)]
    columns = {c: np.concatenate([e.columns[c] for e in experiments]) for c in names}
    origin = ", ".join(dict.fromkeys(e.origin for e in experiments if e.origin))
    uncounted = "; ".join(dict.fromkeys(part for e in experiments if e.header.get("mpi_uncounted")
                                        for part in e.header["mpi_uncounted"].split("; ")))
    working_sets = {e.working_set for e in experiments}
    ids = None if any(e.ids is None for e in experiments) else np.concatenate([e.ids for e in experiments])
    sources = _by_file([s for e in experiments for s in (e.sources or (Source(e.origin, e.header, len(e)),))])
    header = {**agreed_fields([s.header for s in sources]), **({"mpi_uncounted": uncounted} if uncounted else {})}
    sources = sources if len(sources) > 1 else ()     # parts of one file (subsets merged back): that file
    return first.replace(columns=columns, origin=origin, header=header, ids=ids, sources=sources,
                         working_set=first.working_set if len(working_sets) == 1 else None)


def _by_file(sources: list[Source]) -> tuple[Source, ...]:
    """The sources, neighbours of one file and header made one with their records summed (two
    subsets of one trace merged are that trace's records, not two files'). Only neighbours:
    the sources stay in the order of the records, which `Experiment.select` counts by."""
    merged: list[Source] = []
    for s in sources:
        if merged and (merged[-1].origin, dict(merged[-1].header)) == (s.origin, dict(s.header)):
            merged[-1] = Source(s.origin, s.header, merged[-1].records + s.records)
        else:
            merged.append(s)
    return tuple(merged)


def agreed_fields(headers: list) -> dict[str, str]:
    """The header fields that every one of `headers` has with one value, in first-seen order."""
    keys = dict.fromkeys(k for h in headers for k in h)
    return {k: headers[0][k] for k in keys if all(k in h for h in headers) and len({h[k] for h in headers}) == 1}


def shared_records(a: Experiment, b: Experiment) -> int:
    """How many records `a` and `b` both hold (by their ids, `Experiment.identify`; 0 when
    either's are unknown): merged, they would count twice."""
    if a.ids is None or b.ids is None:
        return 0
    return int(np.count_nonzero(np.isin(a.ids, b.ids)))
