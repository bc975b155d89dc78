"""Models as JSON: `export M "m.json"` writes one, `load "m.json"` reads it back so that
`predict` gives the same numbers; `--format json` prints the same document for `fit`.

The document holds everything `Model.predict` and the reports use: the formula (with the
indices of its constants, which `drop` leaves with gaps), the settings, every interval with
its constants, standard errors, covariance and measured range, the cuts, the warnings and the
fitted sample points. Numbers that JSON cannot hold (nan, inf) are written as null, so that
the document is standard JSON with a number or null in every number's place
(docs/llac-language.md, "Machine-readable output"); read back, null is nan, except at the ends
of an interval's region, where it is the unbounded side (-inf below, inf above).
"""
from __future__ import annotations

import dataclasses
import json
import math

import numpy as np

from cll_grammar.formula import Constant, Formula, FormulaError, parse_formula
from cll_grammar.workingset import parse_working_set
from llac.errors import InputError

FORMAT = "llac-model"
VERSION = 2          # 2: the setting `trend` and each interval's `trend` (llac.trend)
READS = (1, 2)       # version 1 files are read as fitted with `trend off`


class ModelFileError(InputError):
    """A file that is not a llac model document (or an unreadable one)."""


def plain(value, finite: bool = True):
    """`value` with numpy arrays and scalars as lists and Python numbers; with `finite` (for
    JSON, which has no nan or inf) a number that is not finite as None (null), else as the
    float (CSV writes nan, inf, -inf)."""
    if isinstance(value, dict):
        return {str(k): plain(v, finite) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [plain(v, finite) for v in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) or not finite else None
    return value


def model_document(model, name: str) -> dict:
    """The JSON-ready document of `model`, stored under the object name `name`."""
    formula = model.formula
    return {
        "format": FORMAT, "version": VERSION, "object": name, "experiment": model.name,
        "formula": {"text": str(formula), "name": formula.name,
                    "terms": [str(t) for t in formula.terms],
                    "indices": [t.constant.index for t in formula.terms]},
        "settings": dataclasses.asdict(model.settings),
        "pieces": [plain(dataclasses.asdict(p)) for p in model.pieces],
        "cuts": [plain(dataclasses.asdict(c)) for c in model.cuts],
        "warnings": list(model.warnings), "insignificant": list(model.insignificant),
        "excluded": model.excluded, "sample_points": plain(model.sample_points),
        "median_rel_error": plain(model.median_rel_error), "max_rel_error": plain(model.max_rel_error),
        "drift": plain(model.drift), "working_set": model.working_set,
        "machine": list(model.machine) if model.machine else None,
        **({"mixed_machines": model.mixed_machines} if model.mixed_machines else {}),
        "communicates": model.communicates, "procs": model.procs,
        **({"timer_cost": model.timer_cost} if model.timer_cost is not None else {}),
        "error": "relative error = |predicted - measured| / measured; times in seconds",
    }


def write_model(model, name: str, path: str) -> None:
    """Write `model` as a JSON document to `path` (OSError when it cannot be written)."""
    with open(path, "w", encoding="utf-8") as f:
        json.dump(model_document(model, name), f, indent=1, allow_nan=False)
        f.write("\n")


def read_model(path: str):
    """The (object name, Model) stored in the JSON file `path`; ModelFileError when it is not
    a llac model document."""
    try:
        with open(path, encoding="utf-8") as f:
            document = json.load(f)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ModelFileError(f"cannot read model file {path!r}: {err}") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise ModelFileError(f"{path!r} is not a llac model file (written by export NAME \"FILE.json\")")
    if document.get("version") not in READS:
        raise ModelFileError(f"{path!r} is a llac model file of version {document.get('version')!r}; "
                             f"this llac reads versions {' and '.join(map(str, READS))}")
    try:
        return _name(document["object"]), _checked(_model(document), "constants" in document["settings"])
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as err:
        what = (f"the field {err.args[0]!r} is missing" if isinstance(err, KeyError)
                else str(err) if isinstance(err, NoFitWrites)
                else "a field has the wrong type or value")
        raise ModelFileError(f"{path!r} is a damaged llac model file: {what}") from None


def _name(name) -> str:
    from llac.parse import name_ok
    if not isinstance(name, str) or not name_ok(name):
        raise ValueError(f"the object name {name!r} is not a llac name")
    return name


def _checked(model, says_constants: bool):
    """`model` when its parts fit together (so that predict and the reports can use it);
    `says_constants`: the file states `constants` (older ones fitted without the bound)."""
    from llac.errors import LlacError
    from llac.model import FitSettings
    from llac.settings import check_settings
    k, variables = len(model.formula.terms), set(model.formula.variables)
    for field in dataclasses.fields(FitSettings):
        default, value = field.default, getattr(model.settings, field.name)
        if type(value) is not type(default) and not (type(default) is float and type(value) is int):
            raise NoFitWrites(f"its settings: {field.name} is {value!r}, not a value of its kind "
                              f"({type(default).__name__})")
    try:
        check_settings(model.settings)
    except LlacError as error:
        raise NoFitWrites(f"its settings: {error.message}") from None
    if not model.pieces:
        raise NoFitWrites("it has no intervals")
    for number, piece in enumerate(model.pieces, 1):
        for field in ("constants", "stderr", "pvalues"):
            if getattr(piece, field).shape != (k,):
                raise NoFitWrites(f"interval {number}: its {field} hold {getattr(piece, field).size} values, "
                                  f"where {model.formula} has {k} terms")
        if piece.cov.shape != (k, k):
            raise NoFitWrites(f"interval {number}: its cov is not {k} x {k}, the terms of {model.formula}")
        for field in ("region", "measured_range"):
            if set(getattr(piece, field)) != variables:
                raise NoFitWrites(f"interval {number}: its {field} is over {sorted(getattr(piece, field))}, "
                                  f"where {model.formula} has the variables {sorted(variables)}")
        strangers = set(piece.dropped + piece.at_bound) - set(model.formula.constants)
        if strangers:
            raise NoFitWrites(f"an interval names {sorted(strangers)[0]!r} among its dropped or bounded "
                              f"constants, which is not one of {model.formula}")
    lacking = sorted((variables | {"time", "count"}) - set(model.sample_points))
    if lacking:
        raise NoFitWrites(f"its sample points lack {lacking[0]!r}, which {model.formula} needs")
    if len({len(v) for v in model.sample_points.values()}) > 1:
        raise NoFitWrites("its sample points' columns differ in length")
    for number, piece in enumerate(model.pieces, 1):
        if piece.trend:
            _check_trend(model, number, piece.trend)
    _check_sense(model, says_constants)
    return model


def _check_trend(model, number: int, trend) -> None:
    """Refuse a trend that no fit writes (llac.trend): along a variable the interval is not
    unbounded in, not a rise, with a negative standard error or a p-value that is none, not
    continued from the largest measured value, or in a model fitted with `trend off`."""
    variable, region = trend.variable, model.pieces[number - 1].region
    if variable not in region or region[variable][1] != np.inf:
        raise NoFitWrites(f"interval {number}: its trend runs along {variable!r}, which is not a "
                          f"variable of {model.formula} in which the interval is unbounded above")
    if not (trend.slope > 0 and trend.stderr >= 0 and 0 <= trend.p_value <= 1):
        raise NoFitWrites(f"interval {number}: its trend (slope {trend.slope:g}, stderr {trend.stderr:g}, "
                          f"p {trend.p_value:g}) is not a significant rise")
    if trend.end != np.max(model.sample_points[variable]) or not model.settings.trend:
        raise NoFitWrites(f"interval {number}: its trend continues from {variable} = {trend.end:g}, not from "
                          f"the largest measured {variable}, or its settings say trend off")


class NoFitWrites(ValueError):
    """A model document that parses, but that no fit could have written; str() says what."""


def _check_sense(model, says_constants: bool) -> None:
    """What a fit could not have written: an interval whose region ends below its start, or a
    constant below 0 that the model's settings keep >= 0 (its term a cost at every sample
    point, `constants nonnegative`): predictions from those would contradict what llac says."""
    from llac.fit import bounded_columns
    for number, piece in enumerate(model.pieces, 1):
        for field in ("region", "measured_range"):
            for v, (low, high) in getattr(piece, field).items():
                if not low <= high:
                    what = "region" if field == "region" else "measured range"
                    raise NoFitWrites(f"interval {number}: its {what} of {v} runs from {low:g} down to {high:g}")
        if piece.df > 0 and not (np.isfinite(piece.scale) and piece.scale >= 0):
            raise NoFitWrites(f"interval {number}: its scale (the residuals' spread) is {piece.scale!r}, "
                              f"where it has {piece.df} degrees of freedom")
        for other, earlier in enumerate(model.pieces[:number - 1], 1):
            if all(max(piece.region[v][0], earlier.region[v][0]) < min(piece.region[v][1], earlier.region[v][1])
                   for v in piece.region):
                raise NoFitWrites(f"intervals {other} and {number} overlap: a point would have two sets of constants")
    if not says_constants:
        return
    design = model.formula.design_matrix({v: model.sample_points[v] for v in model.formula.variables})
    bounded = bounded_columns(design, model.settings)
    for number, piece in enumerate(model.pieces, 1):
        below = np.flatnonzero(bounded & (piece.constants < 0))
        if len(below):
            raise NoFitWrites(f"interval {number}: {model.formula.constants[below[0]]} = "
                             f"{piece.constants[below[0]]:g}, below 0 where its settings keep it >= 0")


def _model(document: dict):
    from llac.model import Cut, FitSettings, Model
    get = document.get
    pieces = tuple(_read(f"interval {i}", p, _piece) for i, p in enumerate(document["pieces"], 1))
    cuts = _read("cuts", document["cuts"], lambda cs: tuple(
        Cut(**{k: v if k in ("variable", "test") else float(v) for k, v in c.items()}) for c in cs))
    return Model(document["experiment"], _formula(document["formula"]),
                 FitSettings(**document["settings"]), pieces, cuts, tuple(document["warnings"]),
                 tuple(document["insignificant"]), _read("excluded", document["excluded"], int),
                 _read("sample_points", document["sample_points"], lambda d: {k: _floats(v) for k, v in d.items()}),
                 _read("median_rel_error", document["median_rel_error"], _number),
                 _read("max_rel_error", document["max_rel_error"], _number),
                 _read("drift", get("drift", {}), lambda d: {str(v): _number(r) for v, r in d.items()}),
                 _read("working_set", get("working_set"), _working_set),
                 _read("machine", get("machine"), _machine),
                 mixed_machines=_read("mixed_machines", get("mixed_machines"), _optional_text),
                 communicates=bool(get("communicates", False)),
                 procs=_read("procs", get("procs"), _optional_count),
                 timer_cost=_read("timer_cost", get("timer_cost"), _optional_cost))


def _read(field: str, value, convert):
    """`convert(value)`, the document's `field`; a value it cannot convert is an error that
    names the field and shows (the start of) the value (NoFitWrites, which says what the file
    cannot be)."""
    try:
        return convert(value)
    except NoFitWrites:
        raise
    except (TypeError, ValueError, AttributeError, IndexError, KeyError):
        shown = json.dumps(value)
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        raise NoFitWrites(f"its {field} is {shown}, which no export writes there") from None


def _piece(p: dict):
    """One interval of the document, its numbers converted."""
    from llac.model import Piece
    arrays = ("constants", "stderr", "pvalues", "cov")
    numbers = ("median_rel_error", "max_rel_error", "r2", "scale")
    for k in arrays:
        if not isinstance(p[k], list):
            raise NoFitWrites(f"its {k} is {p[k]!r}, not a list of numbers")
    return Piece(**{**p, **{k: _floats(p[k]) for k in arrays}, **{k: _number(p[k]) for k in numbers},
                    "region": _region(p["region"]), "measured_range": _region(p["measured_range"]),
                    **{k: _whole(k, p[k], least) for k, least in (("npoints", 1), ("nrecords", 1), ("df", 0))},
                    "dropped": _texts("dropped", p["dropped"]),
                    "at_bound": _texts("at_bound", p.get("at_bound", [])),
                    "trend": _read("trend", p.get("trend"), _trend)})


def _trend(value):
    """An interval's rise continued beyond the data (llac.trend), or None (files before it)."""
    if value is None:
        return None
    from llac.trend import Trend
    numbers = {k: _number(value[k]) for k in ("slope", "intercept", "centre", "end", "stderr", "p_value")}
    if not (isinstance(value["variable"], str) and all(np.isfinite(v) for v in numbers.values())):
        raise ValueError("not a trend")
    return Trend(value["variable"], **numbers)


def _optional_cost(value) -> float | None:
    """A positive number of seconds that older files lack (the timer's cost)."""
    if value is not None and (type(value) not in (int, float) or not value > 0 or not np.isfinite(value)):
        raise TypeError(f"expected seconds > 0, found {value!r}")
    return value


def _optional_text(value) -> str | None:
    """A string field that older files lack."""
    if value is not None and not isinstance(value, str):
        raise TypeError(f"expected a string, found {value!r}")
    return value


def _whole(field: str, value, least: int) -> int:
    """An interval's `field`, a whole number of at least `least` (its points, records, degrees
    of freedom): predict divides by them and looks up Student's t with them."""
    if type(value) is not int or value < least:
        raise NoFitWrites(f"an interval's {field} is {value!r}, not a whole number >= {least}")
    return value


def _texts(field: str, values) -> tuple[str, ...]:
    """An interval's `field`, a list of its constants' names (those dropped, those held at 0)."""
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise NoFitWrites(f"an interval's {field} is {values!r}, not a list of constants' names")
    return tuple(values)


def _optional_count(value) -> int | None:
    """A whole-number field that older files lack."""
    if value is not None and (type(value) is not int or value < 1):
        raise TypeError(f"expected a count, found {value!r}")
    return value


def _machine(value) -> tuple[str, str] | None:
    """The (host, CPU model) pair of a model file (older files lack it)."""
    if value is None:
        return None
    host, cpu = value
    return _optional_text(host), _optional_text(cpu)


def _working_set(text) -> str | None:
    """The document's working set (None when it has none), validated."""
    if text is None:
        return None
    try:
        return parse_working_set(text).text
    except (FormulaError, TypeError, AttributeError) as err:
        raise ValueError(f"bad working set {text!r}: {err}") from None


def _number(value) -> float:
    """A number of the document: null is nan (files of older versions wrote "nan", "inf")."""
    return math.nan if value is None else float(value)


def _floats(values) -> np.ndarray:
    """An array of the document's numbers, null as nan."""
    return np.array(values, dtype=float)


def _region(region: dict) -> dict:
    """An interval's region, variable -> (low, high); a null end is unbounded on its side."""
    return {v: (-math.inf if low is None else float(low), math.inf if high is None else float(high))
            for v, (low, high) in region.items()}


def _formula(data: dict) -> Formula:
    """Rebuild the formula from its terms: parsed with the constants numbered 0, 1, ... (as
    `parse_formula` requires), then given back their own indices."""
    name, indices = data["name"], data["indices"]
    renumbered = [term.replace(f"{name}[{i}]", f"{name}[{k}]", 1)
                  for k, (term, i) in enumerate(zip(data["terms"], indices))]
    try:
        parsed = parse_formula(" + ".join(renumbered))
    except FormulaError as err:
        raise NoFitWrites(f"its formula's terms do not parse: {err.message}") from None
    terms = tuple(dataclasses.replace(t, constant=Constant(name, i)) for t, i in zip(parsed.terms, indices))
    formula = Formula(data["text"], name, terms, parsed.variables)
    if str(formula) != data["text"]:
        raise NoFitWrites(f"its formula's terms give {str(formula)!r}, not its text {data['text']!r}")
    return formula
