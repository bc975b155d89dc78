"""llac's modeling engine: fit an experiment's formula, split it into intervals (the paper's
sets ℵ), and predict with prediction intervals. docs/method.md describes the method.

    model = fit_experiment(experiment, FitSettings(threshold=0.05))
    model.pieces[0].constants, model.cuts, model.warnings
    model.predict({"N": [1e6, 2e6], "P": 8}).values

Only numpy computes: statsmodels and scipy are not imported (their import cost a second).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Mapping

import numpy as np

from cll_grammar.formula import Formula
from cll_grammar.workingset import parse_working_set, with_values
from llac import student_t
from llac.advice import formula_warnings
from llac.experiment import Experiment
from llac.fit import (CONSTANT_BOUNDS, FitError, FitSettings, bounded_columns, fit_statistics, median,
                      noise_factors, relative_fit)
from llac.fit_data import SamplePoints, aggregate_points, check_identifiable, excluded_text
from llac.extrapolation import drift_rates, log_distance
from llac.noise import descheduled_warning, fastest_by, spread_warning, unit_warning
from llac.numbers import number_text
from llac.split import Cut, Leaf, split_points
from llac.trend import Trend, rising_trend

__all__ = ["FitSettings", "FitError", "Piece", "Cut", "Prediction", "Model", "fit_experiment"]

Region = dict[str, tuple[float, float]]
# a prediction interval whose high bound is more than this many times its low one says nothing a
# user can plan with (an order of magnitude): predict warns where one is
USELESS_SPAN = 10.0


@dataclass(frozen=True)
class Piece:
    """One interval: a box in the space of the formula's variables (low < x <= high) and the
    constants that hold in it, with their statistics."""
    region: Region
    constants: np.ndarray
    stderr: np.ndarray
    pvalues: np.ndarray
    cov: np.ndarray
    npoints: int
    nrecords: int
    median_rel_error: float
    max_rel_error: float
    r2: float                       # R² of the weighted (relative) fit
    measured_range: Region
    scale: float = float("nan")    # residual standard deviation of the relative residuals
    df: int = 0                     # residual degrees of freedom
    dropped: tuple[str, ...] = ()   # constants set to 0 here: not significant (their p-value kept)
    at_bound: tuple[str, ...] = ()  # constants held at their bound 0 (the free fit is negative)
    trend: Trend | None = None      # a rise against the formula continued beyond the data (llac.trend)

    def contains(self, columns: Mapping[str, np.ndarray]) -> np.ndarray:
        """Which points (variable -> array) lie in this piece's region."""
        inside = np.ones(np.broadcast(*columns.values()).shape if columns else (), dtype=bool)
        for v, (low, high) in self.region.items():
            inside &= (columns[v] > low) & (columns[v] <= high)
        return inside


@dataclass(frozen=True)
class Prediction:
    """Predicted times with a (1 - alpha) prediction interval, per point."""
    values: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    piece: np.ndarray               # index into model.pieces (-1: no piece, e.g. NaN input)
    extrapolated: np.ndarray        # outside the measured range of its piece
    notes: tuple[str, ...]


@dataclass(frozen=True)
class Model:
    """A fitted experiment: its pieces, the cuts between them, warnings and the data fitted."""
    name: str
    formula: Formula
    settings: FitSettings
    pieces: tuple[Piece, ...]
    cuts: tuple[Cut, ...]
    warnings: tuple[str, ...]
    insignificant: tuple[str, ...]
    excluded: int
    sample_points: dict[str, np.ndarray]
    median_rel_error: float
    max_rel_error: float
    drift: dict[str, float] = field(default_factory=dict)  # log error per log distance beyond the data
    working_set: str | None = None          # the fitted experiment's working set (llac.experiment)
    machine: tuple[str, str] | None = None  # (host, CPU model) the data were measured on
    mixed_machines: str | None = None       # data merged from several machines: which (Experiment)
    communicates: bool = False              # its records moved data (h > 0): g and L enter its time
    procs: int | None = None                # the one P its data were measured with (None: several)
    timer_cost: float | None = None         # seconds its traces' timing costs (overhead or resolution)

    def piece_of(self, columns: Mapping[str, np.ndarray]) -> np.ndarray:
        """The index of the first piece whose region holds each point of `columns` (-1: none,
        e.g. a NaN value)."""
        piece = np.full(len(next(iter(columns.values()))) if columns else 1, -1)
        for i, p in enumerate(self.pieces):
            piece[(piece < 0) & p.contains(columns)] = i
        return piece

    def predict(self, points: Mapping[str, np.ndarray | float]) -> Prediction:
        """Predict the time at `points` (variable -> values, broadcast together) with the
        constants of the piece containing each point, and a multiplicative prediction interval."""
        missing = [v for v in self.formula.variables if v not in points]
        if missing:
            raise FitError(f"predict needs a value for {missing[0]} (the formula {self.formula} "
                           f"uses {', '.join(self.formula.variables)})")
        arrays = np.broadcast_arrays(*(np.asarray(points[v], dtype=float).ravel()
                                       for v in self.formula.variables)) or [np.zeros(1)]
        columns = dict(zip(self.formula.variables, arrays))
        n = len(arrays[0])
        design = _design(self.formula, columns, n)
        piece = self.piece_of(columns)
        values, spread = np.full(n, np.nan), np.full(n, np.nan)
        intervals = np.zeros(n, dtype=bool)       # the point's piece has degrees of freedom left
        for i, p in enumerate(self.pieces):
            rows = piece == i
            intervals[rows] = p.df > 0
            x = design[rows]
            with np.errstate(invalid="ignore", over="ignore"):   # a term with no value: see below
                values[rows] = x @ p.constants
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                relative_var = np.einsum("ij,jk,ik->i", x, p.cov, x) / values[rows] ** 2 + p.scale ** 2
                if p.trend is not None:
                    relative_var += p.trend.log_variance(columns[p.trend.variable][rows])
                for v, rate in self.drift.items():
                    data = self.sample_points[v]
                    relative_var += (rate * log_distance(columns[v][rows], data.min(), data.max())) ** 2
                q = student_t.quantile(self.settings.alpha / 2, p.df) if p.df > 0 else np.nan
                spread[rows] = q * np.sqrt(relative_var)
        values *= self.trend_factors(columns, piece)
        values[~np.all(np.isfinite(design), axis=1)] = np.nan    # no value there: no prediction (said below)
        with np.errstate(invalid="ignore", over="ignore"):   # 0 with an infinite spread: no bounds (nan)
            bounds = np.sort(np.stack([values * np.exp(-spread), values * np.exp(spread)]), axis=0)
        bounds[:, ~np.all(np.isfinite(bounds), axis=0)] = np.nan     # none (said in a note), not 0 .. inf
        self._widen_in_gaps(columns, design, piece, bounds)
        floor_notes = self._measured_floor(columns, design, values, bounds, piece)
        extrapolated, notes = self._extrapolation(columns, piece)
        return Prediction(values, bounds[0], bounds[1], piece, extrapolated,
                          tuple(notes + self._trend_notes(columns, piece) + self._gap_notes(columns)
                                + self._drift_notes(columns) + floor_notes
                                + self._timer_notes(columns, values)
                                + self._wide_notes(columns, bounds)
                                + self._no_value_notes(columns, design, values, bounds, intervals)
                                + self._no_time_notes(columns, design, values, piece)))

    def trend_factors(self, columns: Mapping[str, np.ndarray], piece: np.ndarray) -> np.ndarray:
        """The factor by which each point's prediction (in the piece `piece` gives) continues
        its piece's rise beyond the data (llac.trend); 1 where there is none."""
        factor = np.ones(len(piece))
        for i, p in enumerate(self.pieces):
            if p.trend is not None:
                rows = piece == i
                x = np.broadcast_to(np.asarray(columns[p.trend.variable], dtype=float), piece.shape)
                factor[rows] = np.exp(p.trend.log_factor(x[rows]))
        return factor

    def _measured_floor(self, columns: dict, design: np.ndarray, values: np.ndarray,
                        bounds: np.ndarray, piece: np.ndarray) -> list[str]:
        """Beyond the data, raise the low bounds (`bounds[0]`, in place) to what was measured
        at a smaller point, with the notes that say so. With every term >= 0 and its constant
        >= 0 (the default `constants nonnegative`), a point where each term is at least its
        value at a sample point, and one larger, cannot take less time than that point: the
        floor is the time measured at the sample point it dominates with the largest model
        value (the nearest below it; not the largest time, which would pick the noisiest
        point), less the fit's noise there (its piece's interval for a new measurement,
        e^(-q·σ)). The interval is multiplicative: far beyond the data its low end would
        otherwise fall below times measured at smaller inputs, and go on falling as the input
        grows. Inside the data the interval is the noise's, which this leaves alone. The
        argument holds for one set of constants: only sample points of the interval that
        predicts the point (`piece`) count, and the low bound never rises above the prediction
        (a note says when the prediction is below such a time)."""
        data = self.sample_points
        if self.settings.constants == "free" or not self.formula.variables or not len(data["time"]):
            return []
        sample = {v: data[v] for v in self.formula.variables}
        measured = _design(self.formula, sample, len(data["time"]))
        beyond = np.zeros(len(values), dtype=bool)
        for v in self.formula.variables:
            beyond |= columns[v] > data[v].max()
        usable = beyond & np.all(np.isfinite(design) & (design >= 0), axis=1) & np.all(np.isfinite(bounds), axis=0)
        if not np.all(np.isfinite(measured) & (measured >= 0)) or not usable.any():
            return []
        model_value, floor_of = np.full(len(data["time"]), -np.inf), np.full(len(data["time"]), -np.inf)
        sample_piece = self.piece_of(sample)
        for index, p in enumerate(self.pieces):
            rows = (sample_piece == index) & (p.df > 0)
            model_value[rows] = measured[rows] @ p.constants
            floor_of[rows] = data["time"][rows] * np.exp(-student_t.quantile(self.settings.alpha / 2, p.df) * p.scale)
        target = np.where(usable[:, None], design, 0.0)[:, None, :]        # no inf or nan in the sums
        slack = 1e-12 * np.abs(target)
        dominated = (np.all(measured[None, :, :] <= target + slack, axis=2)      # target x sample
                     & np.any(measured[None, :, :] < target - slack, axis=2) & usable[:, None]
                     & (sample_piece[None, :] == piece[:, None]))
        # the largest model value among the dominated points; of equal ones (terms whose constants
        # are 0), the one whose terms are largest, the nearest below: never chosen by its time,
        # which would pick the noisiest point
        ranked = np.where(dominated, model_value[None, :], -np.inf)
        tied = dominated & (ranked >= ranked.max(axis=1, keepdims=True) * (1 - 1e-12))
        nearest = np.argmax(np.where(tied, measured.sum(axis=1)[None, :], -np.inf), axis=1)
        floor = np.where(dominated.any(axis=1), floor_of[nearest], -np.inf)
        raised = usable & (floor > bounds[0])
        bounds[0, raised] = np.minimum(floor[raised], values[raised])
        raised &= floor <= values
        notes = []
        below = usable & dominated.any(axis=1) & (values < data["time"][nearest])
        for points, said in ((np.flatnonzero(raised), "the low bound at {at} is the time measured at a smaller "
                                                      "point, less the fit's noise ({where}: {time} s, {floor} s)"),
                             (np.flatnonzero(below), "the prediction at {at} is below the time measured at a "
                                                     "smaller point ({where}: {time} s)")):
            if len(points):
                source = int(nearest[points[0]])
                at = self._point_text(columns, points[0]) + (f" and {len(points) - 1} more point(s)"
                                                             if len(points) > 1 else "")
                where = " ".join(f"{v}={number_text(data[v][source])}" for v in self.formula.variables)
                notes.append(said.format(at=at, where=where, time=number_text(data["time"][source], 4),
                                         floor=number_text(floor_of[source], 4))
                             + ": every term of the formula is smaller there and the constants are >= 0, so "
                               "the time cannot be less")
        return notes

    def _no_value_notes(self, columns: dict, design: np.ndarray, values: np.ndarray, bounds: np.ndarray,
                        intervals: np.ndarray) -> list[str]:
        """A line where a finite prediction has no interval (a prediction of 0, whose relative
        interval is none, or arithmetic that overflows), and
        one warning per set of terms of the formula that have no finite value at some points (log
        of a number <= 0, a division by zero, an overflow), naming the points and those terms:
        the formula says nothing there. Blanks (nan) without a word read as a tool failure."""
        notes = []
        unbounded = np.isfinite(values) & intervals & ~np.all(np.isfinite(bounds), axis=0)
        measured_positive = [v for v in self.formula.variables if self.sample_points[v].min() > 0]
        unmeasured = np.zeros(len(values), dtype=bool)      # a variable <= 0 where every measured one is > 0
        for v in measured_positive:
            unmeasured |= np.broadcast_to(columns[v], unmeasured.shape) <= 0
        for points, why in ((np.flatnonzero(unbounded & (values == 0)), "the prediction there is 0 s, and the "
                             "interval is relative (a factor of the prediction): 0 has none"),
                            (np.flatnonzero(unbounded & (values != 0) & unmeasured),
                             f"{' or '.join(measured_positive)} is 0 or negative there, and every measured value is "
                             f"above 0: nothing measured tells how wrong the model is so far away"),
                            (np.flatnonzero(unbounded & (values != 0) & ~unmeasured),
                             "its arithmetic overflows so far beyond the data")):
            if len(points):
                where = self._point_text(columns, points[0])
                notes.append(f"no prediction interval at {where}" + (f" and {len(points) - 1} more point(s)"
                             if len(points) > 1 else "") + f": {why}")
        finite = np.isfinite(design)
        kinds: dict[tuple, list[int]] = {}      # the terms without a value -> the points where
        for i in np.flatnonzero(~np.all(finite, axis=1)):
            kinds.setdefault(tuple(np.flatnonzero(~finite[i])), []).append(i)
        for which, bad in kinds.items():
            where = ", ".join(self._point_text(columns, i) for i in bad[:3]) + (", ..." if len(bad) > 3 else "")
            terms = [str(self.formula.terms[k]) for k in which]
            what = f"term {terms[0]} is not a finite number" if len(terms) == 1 else \
                f"terms {', '.join(terms)} are not finite numbers"
            notes.append(f"warning: the formula has no value at {where}: its {what} "
                         f"there (the log of a number <= 0, a division by zero or an overflow); no prediction")
        return notes

    def _point_text(self, columns: dict, i: int) -> str:
        """Point `i` of `columns` as `N=1024 P=4` (the formula's variables)."""
        return " ".join(f"{v}={number_text(columns[v][i])}" for v in self.formula.variables)

    def _no_time_notes(self, columns: dict, design: np.ndarray, values: np.ndarray, piece: np.ndarray) -> list[str]:
        """A warning when the model predicts no time (<= 0 s) somewhere, with its cause at the
        first such point: terms that give negative time there (a term negative where the
        variables leave the measured range, `N=-1000`, or a constant fitted negative with
        `set constants free`), else every term that does not vanish has its constant at 0 in
        that interval (held at the bound or pruned). Silent, such a prediction reads as an
        error of -100%."""
        bad = np.flatnonzero(np.isfinite(values) & (values <= 0))
        if not len(bad):
            return []
        first, number = bad[0], int(piece[bad[0]])
        where = ", ".join(f"{v}={number_text(columns[v][first])}" for v in self.formula.variables)
        head = f"warning: the model predicts no time (<= 0 s) at {len(bad)} point(s), first {where} (interval {number + 1})"
        constants = self.pieces[number].constants
        negative = [k for k, c in enumerate(design[first] * constants) if c < 0]
        if not negative:
            return [f"{head}: there every term that does not vanish has its constant at 0 (held at its bound or set "
                    f"to 0 as insignificant); the prediction is meaningless there: try `set constants free` or "
                    f"`set prune off` and fit again, or measure where it predicts"]
        terms = ", ".join(str(self.formula.terms[k]) for k in negative)
        outside = [f"{v}={number_text(columns[v][first])} is outside the measured {number_text(data.min())}..{number_text(data.max())}"
                   for v, data in ((v, self.sample_points[v]) for v in self.formula.variables)
                   if not data.min() <= columns[v][first] <= data.max()]
        if all(constants[k] < 0 for k in negative):
            cause = f"the constant of {terms} is negative (`set constants free` allows it) and outweighs the other terms"
        else:
            cause = f"the term{'s' * (len(negative) > 1)} {terms} {'is' if len(negative) == 1 else 'are'} negative"
        return [f"{head}: there {cause}" + (f" ({'; '.join(outside)})" if outside else "") +
                ": the formula describes the time only near the measured range; predict there"]

    def _gaps(self, columns: dict):
        """Per cut: the cut, the measured values next to it on either side, and which points
        lie strictly between those (where the regime change was not measured)."""
        for cut in self.cuts:
            measured = self.sample_points[cut.variable]
            below, above = measured[measured <= cut.value], measured[measured > cut.value]
            if len(below) and len(above):
                low, high = below.max(), above.min()
                x = columns[cut.variable]
                yield cut, low, high, (x > low) & (x < high)

    def _widen_in_gaps(self, columns: dict, design: np.ndarray, piece: np.ndarray, bounds: np.ndarray) -> None:
        """Between the measured values on either side of a cut either interval's constants may
        hold: the interval (`bounds`, in place) reaches the other side's prediction too."""
        for cut, low, high, inside in self._gaps(columns):
            for side in (low, high):
                other = self.piece_of({**columns, cut.variable: np.full(len(piece), side)})
                for i in np.unique(other[inside & (other >= 0) & (other != piece)]):
                    rows = inside & (other == i) & (other != piece) & np.all(np.isfinite(bounds), axis=0)
                    with np.errstate(invalid="ignore", over="ignore"):
                        alternative = design[rows] @ self.pieces[i].constants
                    bounds[0, rows] = np.fmin(bounds[0, rows], alternative)
                    bounds[1, rows] = np.fmax(bounds[1, rows], alternative)

    def _gap_notes(self, columns: dict) -> list[str]:
        """One note per cut with predicted points between the measured values on either side
        of it (_gaps): the regime changes somewhere there, unmeasured, and the cut (their
        midpoint) is a guess (a review's M = 100 and 128, between the measured 64 and 256, were
        35% above the interval of M <= 128 that predicted them)."""
        notes = []
        for cut, low, high, gap in self._gaps(columns):
            inside = np.unique(columns[cut.variable][gap])
            if len(inside):
                shown = ", ".join(f"{cut.variable}={number_text(v)}" for v in inside[:3]) + (", ..." if len(inside) > 3 else "")
                notes.append(f"{shown}: between the measured {cut.variable}={number_text(low)} and "
                             f"{cut.variable}={number_text(high)}, where the fit cuts (at {number_text(cut.value)}, "
                             f"between them): where the regime changes there was not measured, so either "
                             f"interval's constants may hold, and the interval reaches both; measure there to "
                             f"place the cut")
        return notes

    def _timer_notes(self, columns: dict, values: np.ndarray) -> list[str]:
        """A warning when predictions are below TIMER_FLOOR_FACTOR times what timing costs in
        the model's traces (`timer_cost`): a measurement there would time the timer, so no
        measured time can check such a prediction (a review's N=5, fitted from N >= 250,
        predicted 1.9e-8 s where timing costs 5.1e-8 s, and measured 6 times that)."""
        if self.timer_cost is None:
            return []
        low = np.flatnonzero(np.isfinite(values) & (values < TIMER_FLOOR_FACTOR * self.timer_cost))
        if not len(low):
            return []
        more = f" (and {len(low) - 1} more point{'s' * (len(low) > 2)})" if len(low) > 1 else ""
        return [f"warning: at {self._point_text(columns, int(low[0]))}{more} the prediction "
                f"({number_text(values[low[0]])} s) is below {TIMER_FLOOR_FACTOR}x what timing costs in its traces "
                f"({self.timer_cost:.3g} s): a measurement there would time the timer, so none can check the "
                f"prediction; time a loop of many executions to compare"]

    def _wide_notes(self, columns: dict, bounds: np.ndarray) -> list[str]:
        """A warning when the prediction interval spans more than USELESS_SPAN (high over low)
        somewhere: honest (the backtests' error beyond the data, a model that fits badly), but
        no longer a prediction a user can plan with, and a table of numbers hides that."""
        with np.errstate(divide="ignore", invalid="ignore"):
            span = bounds[1] / bounds[0]
        wide = np.flatnonzero(np.isfinite(span) & (span > USELESS_SPAN))
        if not len(wide):
            return []
        first = int(wide[np.argmax(span[wide])])
        more = f" (and {len(wide) - 1} more point{'s' * (len(wide) > 2)})" if len(wide) > 1 else ""
        return [f"warning: at {self._point_text(columns, first)}{more} the {1 - self.settings.alpha:.0%} interval "
                f"spans a factor of {span[first]:.3g} ({number_text(bounds[0][first])} .. "
                f"{number_text(bounds[1][first])} s): the model cannot say more there; measure nearer to it, or "
                f"check the formula (`suggest {self.name}`)"]

    def _drift_notes(self, columns: dict) -> list[str]:
        """One note per variable whose backtested drift widens some interval beyond the data."""
        notes = []
        for v, rate in self.drift.items():
            data = self.sample_points[v]
            if rate > 0 and np.any(log_distance(columns[v], data.min(), data.max()) > 0):
                shown = f"±{np.expm1(rate * np.log(2)):.1%} at twice the largest measured {v}"
                if np.any(columns[v] > data.max()):
                    notes.append(f"beyond the measured {v} the interval includes the extrapolation error that "
                                 f"backtests on the data show (one standard deviation: {shown}; docs/method.md §6)")
                else:
                    notes.append(f"below the measured {v} the interval includes the extrapolation error that "
                                 f"backtests show upward (one standard deviation: {shown}), taken as the same per "
                                 f"halving: no backtest measures it downward, where a fixed cost weighs more "
                                 f"(docs/method.md §6)")
        return notes

    def _trend_notes(self, columns: dict, piece: np.ndarray) -> list[str]:
        """One note per piece whose rise some point's prediction continues (llac.trend)."""
        notes = []
        for i, p in enumerate(self.pieces):
            if p.trend is None:
                continue
            x = columns[p.trend.variable]
            beyond = np.unique(x[(piece == i) & (x > p.trend.end)])
            if len(beyond):
                shown = ", ".join(f"{p.trend.variable}={number_text(u)}" for u in beyond[:3]) + \
                    (", ..." if len(beyond) > 3 else "")
                notes.append(f"{shown}: interval {i + 1}'s rise against the formula continued beyond the "
                             f"measured {p.trend.variable} = {number_text(p.trend.end)} "
                             f"({p.trend.per_doubling} per doubling; `set trend off` and fit again for "
                             f"its constants alone; docs/method.md §6)")
        return notes

    def _extrapolation(self, columns: dict, piece: np.ndarray) -> tuple[np.ndarray, list[str]]:
        """Flag points outside their piece's measured range, with one note per variable and piece."""
        flagged = np.zeros(len(piece), dtype=bool)
        notes = []
        for v, x in columns.items():
            data = self.sample_points[v]
            for i, p in enumerate(self.pieces):
                low, high = p.measured_range[v]
                out = (piece == i) & ((x < low) | (x > high))
                if not out.any():
                    continue
                flagged |= out
                shown = np.unique(x[out])
                which = ", ".join(f"{v}={number_text(u)}" for u in shown[:3]) + (", ..." if len(shown) > 3 else "")
                beyond = np.unique(x[out & ((x < data.min()) | (x > data.max()))])
                if len(beyond) == len(shown):
                    clause = " and beyond all measured data"
                elif len(beyond):           # some inside the data (another interval's), some beyond it
                    clause = (f" ({', '.join(f'{v}={number_text(u)}' for u in beyond[:3])}"
                              f"{', ...' if len(beyond) > 3 else ''} beyond all measured data)")
                else:
                    clause = ""
                notes.append(f"{which}: outside the measured range {number_text(low)}..{number_text(high)} of {v} in "
                             f"interval {i + 1}{clause}")
        return flagged, notes

    def aleph(self) -> dict[str, list[tuple[float, Region]]]:
        """The paper's sets ℵ: for each constant, its value in each piece with that piece's
        region, in piece order (one entry per piece, even where the value repeats)."""
        return {name: [(float(p.constants[i]), dict(p.region)) for p in self.pieces]
                for i, name in enumerate(self.formula.constants)}


def fit_experiment(experiment: Experiment, settings: FitSettings = FitSettings(),
                   quick: bool = False, points: SamplePoints | None = None) -> Model:
    """Fit `experiment`'s formula by relative least squares, split into intervals where the
    constants change (if `settings.split`), collect warnings, and measure by backtests how fast
    predictions beyond the data lose accuracy (`Model.drift`). `quick` skips the formula
    advice and the backtests, for callers that compare many formulas' predictions (suggest).
    `points`: the experiment's sample points aggregated by the caller with
    `settings.aggregate` (suggest aggregates once for the many formulas over the same
    variables). Raises FitError on data or settings that cannot give a fit."""
    _check_settings(settings)
    if points is None:
        points = aggregate_points(experiment.formula, experiment.columns, settings.aggregate)
    model = _fit_points(experiment.name, experiment.formula, points, settings, None if quick else experiment)
    model = replace(model, working_set=_model_working_set(experiment), machine=experiment.machine,
                    mixed_machines=experiment.mixed_machines,
                    communicates=bool("h" in experiment.columns and np.nanmax(experiment.columns["h"], initial=0) > 0),
                    procs=_single_procs(experiment), timer_cost=timer_cost(experiment))
    if quick:
        return model

    def refit(mask: np.ndarray) -> Model | None:
        part = SamplePoints({v: x[mask] for v, x in points.variables.items()}, points.time[mask],
                            points.count[mask], 0, points.spread[mask])
        try:
            return _fit_points(experiment.name, experiment.formula, part, settings)
        except FitError:
            return None
    noise = noise_factors(points.spread)
    unmodelled, units = _unmodelled_notes(experiment), unit_warning(experiment, settings.aggregate)
    cause = ("a variable the formula lacks" if unmodelled else None) or \
        ("the records of different threads differ" if units else None)
    return replace(model, sample_points={**model.sample_points, "spread": points.spread},
                   warnings=model.warnings + unmodelled + tuple(units) + _timer_notes(experiment, points)
                   + tuple(spread_warning(points.spread, settings.aggregate, settings.threshold, cause))
                   + tuple(descheduled_warning(experiment, settings.aggregate)),
                   drift=drift_rates(points.variables, points.time, noise, refit))


def _model_working_set(experiment: Experiment) -> str | None:
    """The working set as the model keeps it: a variable of the `bytes` clause that the
    formula lacks (so the model's sample points lack it) is replaced by its value where it
    has one value in every record; where it varies it stays, and the cache-aware notes say
    that the points cannot tell its value."""
    fixed = {v: float(column[0]) for v, column in _extra_variables(experiment).items()
             if np.all(column == column[0]) and np.isfinite(column[0])}
    if not fixed:
        return experiment.working_set
    return with_values(parse_working_set(experiment.working_set), fixed).text


def _extra_variables(experiment: Experiment) -> dict[str, np.ndarray]:
    """The columns of the working set's variables that the formula lacks (captured for the
    `bytes` clause only), which a model's sample points do not keep."""
    if experiment.working_set is None or not len(experiment):
        return {}
    return {v: experiment.columns[v] for v in parse_working_set(experiment.working_set).variables
            if v in experiment.columns and v not in experiment.formula.variables}


def _unmodelled_columns(experiment: Experiment) -> dict[str, np.ndarray]:
    """The program variables among the experiment's columns that its formula lacks: those of
    the working set, and any column that is not measured by each record (time, rank, thread,
    the MPI and PUB columns, counters), as after `formula` or a CSV load."""
    measured = set(experiment.measured_columns)
    return {**{v: c for v, c in experiment.columns.items()
               if v not in measured and v not in experiment.formula.variables},
            **_extra_variables(experiment)}


UNMODELLED_EFFECT = 1.25   # a lacking variable whose values' fastest times differ more than this matters


def _unmodelled_notes(experiment: Experiment) -> tuple[str, ...]:
    """A warning per program variable that the formula lacks and that takes several values
    within one sample point, each of them repeated, and on which the time depends there (at a
    typical point its slowest value's fastest record over its fastest one's, above
    UNMODELLED_EFFECT: llac.noise.fastest_by): its records are fitted as repetitions of the
    point, and their spread is that variable's effect, not noise. A repetition counter or a
    time stamp (one record per value), and a variable the time does not follow (P of an
    experiment whose work does not depend on it), get none."""
    extra = _unmodelled_columns(experiment)
    if not extra or not len(experiment):
        return ()
    notes = []
    of_working_set = _extra_variables(experiment)
    for v, column in extra.items():             # each an experiment's column: fastest_by reads it there
        spread = fastest_by(experiment, v)
        if spread is not None and spread.repeated and spread.ratio > UNMODELLED_EFFECT:
            values = np.unique(column)
            shown = ", ".join(f"{number_text(x)}" for x in values[:4]) + (", ..." if len(values) > 4 else "")
            notes.append(f"{v}{' (of the working set)' * (v in of_working_set)} takes several "
                         f"values within a sample point "
                         f"({shown}) but is not a variable of the formula: those records are fitted as "
                         f"repetitions of one point, and their spread is {v}'s effect, not noise; add {v} to "
                         f"the formula, or fit one value at a time (`where {v} == {number_text(values[0])}`)")
    return tuple(notes)


TIMER_FLOOR_FACTOR = 10   # times below this many times the timer's own cost measure the timer


def timer_cost(experiment: Experiment) -> float | None:
    """What timing costs in the experiment's traces: the header's `overhead` of a begin/end
    pair, or the timer's resolution; of merged files, the largest any states (None: unknown)."""
    floors = []
    for key in ("overhead", "timer_resolution"):
        for value in experiment.header_values(key, "nan"):
            try:
                floors.append(float(value))
            except ValueError:
                continue
    return max((f for f in floors if np.isfinite(f) and f > 0), default=None)


def _timer_notes(experiment: Experiment, points: SamplePoints) -> tuple[str, ...]:
    """A warning when sample points' times are within TIMER_FLOOR_FACTOR of what timing costs
    (timer_cost): such a fit describes the timer, and its tiny errors and p-values are no
    evidence for the formula."""
    floor = timer_cost(experiment)
    if floor is None:
        return ()
    low = int(np.sum(points.time < TIMER_FLOOR_FACTOR * floor))
    if not low:
        return ()
    return (f"{low} of {len(points.time)} sample points take less than {TIMER_FLOOR_FACTOR}x the "
            f"timer's own cost ({floor:.3g} s, the trace's overhead or resolution): their times measure the "
            f"timer, not the code; time a larger region (a loop of many executions) for them",)


def _single_procs(experiment: Experiment) -> int | None:
    """The P of every record, when they share one (sequential data: 1)."""
    if "P" not in experiment.columns:
        return 1
    values = np.unique(experiment.columns["P"])
    return int(values[0]) if len(values) == 1 else None


def _fit_points(name: str, formula: Formula, points: SamplePoints, settings: FitSettings,
                experiment: Experiment | None = None) -> Model:
    """The model of `formula` on aggregated sample points, without drift rates; with the formula
    advice (llac.advice) when the `experiment` whose records they summarise is given."""
    unit = _time_unit(points.time)
    points = replace(points, time=points.time / unit)
    design = _design(formula, points.variables, len(points))
    check_identifiable(formula, points, design)
    try:
        noise, bounded = noise_factors(points.spread), bounded_columns(design, settings)
        leaves, cuts = split_points(design, points.time, points.variables, settings, bounded, noise, points.spread)
        if settings.prune:
            leaves = [_prune(leaf, design, points.time, settings.alpha, bounded, noise) for leaf in leaves]
        pieces = tuple(_piece(leaf, design, points, formula) for leaf in leaves)
        if settings.trend:
            pieces = tuple(_with_trend(piece, leaf, design, points, settings) for piece, leaf in zip(pieces, leaves))
        if len(pieces) == 1:
            whole = pieces[0]
        else:
            fit = relative_fit(design, points.time, bounded, noise)
            whole = _piece(Leaf(leaves[0].region, np.arange(len(points)), fit, (), fit.at_bound),
                           design, points, formula)
    except np.linalg.LinAlgError:
        raise FitError("the least-squares problem is numerically singular: the times or the "
                       "formula's terms span too many orders of magnitude") from None
    errors = np.concatenate([leaf.fit.rel_error for leaf in leaves])
    insignificant, notes = _significance(formula, whole, pieces, settings.alpha)
    warnings = (_warnings(formula, points, pieces, cuts, settings, [leaf.blocked for leaf in leaves]) + notes + _bound_notes(pieces)
                + _dropped_notes(formula, pieces))
    if experiment is not None:
        warnings += formula_warnings(experiment, points, pieces, design, settings.threshold, unit)
    data = {**points.variables, "time": points.time * unit, "count": points.count}
    return Model(name, formula, settings, tuple(_in_unit(p, unit) for p in pieces), tuple(cuts),
                 tuple(warnings), insignificant, points.excluded, data, median(errors),
                 float(np.max(errors)))


def _time_unit(time: np.ndarray) -> float:
    """A power of two near the median time. The relative fit does not depend on the unit of
    time, so the fit runs on time / unit (near 1, exact in floating point) and the constants
    are scaled back: times of 1e-300 or 1e300 s fit as well as times of 1 s."""
    return float(2.0 ** np.round(np.log2(np.median(time))))


def _in_unit(piece: Piece, unit: float) -> Piece:
    """`piece` fitted on time / unit, with its constants back in the unit of the times."""
    with np.errstate(over="ignore"):   # the covariance of times near 1e300 is beyond the float range
        return replace(piece, constants=piece.constants * unit, stderr=piece.stderr * unit,
                       cov=piece.cov * unit * unit)


def _design(formula: Formula, columns: dict[str, np.ndarray], n: int) -> np.ndarray:
    """The n x k design matrix, also for a formula without variables (constant terms only)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return formula.design_matrix(columns) if columns else np.repeat(formula.design_matrix({}), n, axis=0)


def _check_settings(settings: FitSettings) -> None:
    """Reject settings outside their meaningful ranges."""
    checks = [(settings.threshold >= 0, "threshold must be >= 0"),
              (settings.maxintervals >= 1, "maxintervals must be >= 1"),
              (settings.maxpieces >= 1, "maxpieces must be >= 1"),
              (settings.minpoints >= 0, "minpoints must be >= 0 (0 = automatic)"),
              (0 < settings.alpha < 1, "alpha must be between 0 and 1"),
              (settings.bootstrap >= 1, "bootstrap must be >= 1"),
              (settings.constants in CONSTANT_BOUNDS, f"constants must be one of {', '.join(CONSTANT_BOUNDS)}")]
    for ok, message in checks:
        if not ok:
            raise FitError(message)


def _prune(leaf: Leaf, design: np.ndarray, time: np.ndarray, alpha: float, bounded: np.ndarray,
           noise: np.ndarray) -> Leaf:
    """Backward elimination in one leaf: while some constant is not significantly different
    from 0 (p > alpha), set the least significant one to 0 and refit the others (a refit can
    hold another bounded constant at 0); at least one constant stays. A term below the noise
    otherwise gets a noisy value that extrapolation magnifies (docs/method.md, §4)."""
    at_bound = list(leaf.at_bound)
    active, dropped = [i for i in range(design.shape[1]) if i not in at_bound], []
    fit = leaf.fit
    while len(active) > 1:
        pvalues = fit_statistics(design[leaf.rows][:, active], time[leaf.rows], fit).pvalues
        if not np.nanmax(pvalues, initial=0.0) > alpha:
            break
        worst = int(np.nanargmax(pvalues))
        dropped.append((active.pop(worst), float(pvalues[worst])))
        fit = relative_fit(design[leaf.rows][:, active], time[leaf.rows], bounded[active], noise[leaf.rows])
        held = [active[i] for i in fit.at_bound]
        at_bound += held
        active = [i for i in active if i not in held]
    return replace(leaf, fit=fit, dropped=tuple(dropped), at_bound=tuple(at_bound))


def _piece(leaf: Leaf, design: np.ndarray, points: SamplePoints, formula: Formula) -> Piece:
    """Statistics of one leaf's fit, as a Piece; a dropped constant has value, standard error
    and covariance 0 and keeps the p-value it was dropped with; a constant held at its bound 0
    has value, standard error and covariance 0 and no p-value (NaN)."""
    rows = leaf.rows
    kept = np.ones(design.shape[1], dtype=bool)
    kept[[i for i, _ in leaf.dropped] + list(leaf.at_bound)] = False
    stats = fit_statistics(design[rows][:, kept], points.time[rows], leaf.fit)
    constants, stderr, pvalues = np.zeros(len(kept)), np.zeros(len(kept)), np.zeros(len(kept))
    cov = np.zeros((len(kept), len(kept)))
    constants[kept], stderr[kept], pvalues[kept] = stats.constants, stats.stderr, stats.pvalues
    cov[np.ix_(kept, kept)] = stats.cov
    for i, p in leaf.dropped:
        pvalues[i] = p
    pvalues[list(leaf.at_bound)] = np.nan
    measured = {v: (float(x[rows].min()), float(x[rows].max())) for v, x in points.variables.items()}
    return Piece(dict(leaf.region), constants, stderr, pvalues, cov,
                 len(rows), int(points.count[rows].sum()), leaf.fit.median_rel_error,
                 leaf.fit.max_rel_error, stats.r2, measured, stats.scale, stats.df,
                 tuple(formula.constants[i] for i, _ in leaf.dropped),
                 tuple(formula.constants[i] for i in sorted(leaf.at_bound)))


def _with_trend(piece: Piece, leaf: Leaf, design: np.ndarray, points: SamplePoints,
                settings: FitSettings) -> Piece:
    """`piece` with the rise its points show against its fit along a variable in which it is
    unbounded above, continued beyond the data (llac.trend); unchanged when there is none."""
    unbounded = [v for v, (_, high) in piece.region.items() if high == np.inf]
    if not unbounded:
        return piece
    rows = leaf.rows
    trend = rising_trend({v: x[rows] for v, x in points.variables.items()}, points.time[rows],
                         design[rows] @ piece.constants, points.spread[rows], unbounded,
                         {v: float(np.max(x)) for v, x in points.variables.items()},
                         settings.alpha, settings.threshold)
    return replace(piece, trend=trend) if trend else piece


def _bound_notes(pieces: tuple[Piece, ...]) -> list[str]:
    """One warning per constant held at its bound 0, naming its intervals."""
    where: dict[str, list[int]] = {}
    for n, piece in enumerate(pieces):
        for name in piece.at_bound:
            where.setdefault(name, []).append(n + 1)
    notes = []
    for name, numbers in where.items():
        place = "the fit" if len(pieces) == 1 else \
            "every interval" if len(numbers) == len(pieces) else \
            "interval" + "s" * (len(numbers) > 1) + " " + ", ".join(map(str, numbers))
        notes.append(f"constant {name} held at 0 in {place}: the unconstrained fit makes it "
                     f"negative, and a term cannot cost negative time; `set constants free` allows it")
    return notes


def _dropped_notes(formula: Formula, pieces: tuple[Piece, ...]) -> list[str]:
    """One warning per constant set to 0 by pruning, naming its interval."""
    notes = []
    for n, piece in enumerate(pieces):
        where = f"interval {n + 1}" if len(pieces) > 1 else "the fit"
        for name in piece.dropped:
            p = piece.pvalues[formula.constants.index(name)]
            notes.append(f"constant {name} set to 0 in {where}: not significantly different from 0 "
                         f"(p={p:.2g}); `set prune off` keeps it")
    return notes


def _significance(formula: Formula, whole: Piece, pieces: tuple[Piece, ...],
                  alpha: float) -> tuple[tuple[str, ...], list[str]]:
    """Constants not significantly different from 0 in the model's own intervals (the single
    fit when there is one) or held at their bound 0 there, and a warning for each occurrence
    that pruning and the bound did not handle."""
    fits = [(whole, "the fit")] if len(pieces) == 1 else \
        [(p, f"interval {i + 1}") for i, p in enumerate(pieces)]
    names, warnings = [], []
    for piece, where in fits:
        for name, p in zip(formula.constants, piece.pvalues):
            if p > alpha or name in piece.at_bound:
                names.append(name)
                if name not in piece.dropped + piece.at_bound:  # these have their own notes
                    warnings.append(f"constant {name} is not significantly different from 0 "
                                    f"(p={p:.2g}) in {where}")
    return tuple(dict.fromkeys(names)), warnings


def _warnings(formula: Formula, points: SamplePoints, pieces: tuple[Piece, ...],
              cuts: list[Cut], settings: FitSettings, blocked: list) -> list[str]:
    """Warnings about excluded data, too many intervals, errors left above the threshold (and
    why: splitting off, the interval budget that kept out the cut of `blocked`, one per piece,
    or no statistically real cut)."""
    warnings = []
    if points.excluded:
        warnings.append(excluded_text(points.excluded))
    k = len(formula.constants)
    if settings.split and 0 < settings.minpoints <= k:
        warnings.append(f"minpoints {settings.minpoints} is below the formula's {k} constants + 1: each side "
                        f"of a cut keeps a residual degree of freedom, so the fit used minpoints {k + 1} "
                        f"(set minpoints 0, automatic, says the same without this warning)")
    for v in formula.variables:
        count = len({c.value for c in cuts if c.variable == v}) + 1
        if count > 3:
            warnings.append(f"{count} intervals on {v}: the formula is probably wrong")
    for i, (p, stopped) in enumerate(zip(pieces, blocked)):
        where = f"interval {i + 1}" if len(pieces) > 1 else "the fit"
        side = max(settings.minpoints, k + 1)       # the fewest points on each side of a cut (llac.split)
        if p.median_rel_error > settings.threshold:
            why = "splitting is off" if not settings.split else \
                _budget_text(stopped, settings) if stopped else \
                (f"its {p.npoints} sample points are too few to try a cut (each side needs {side}); measure "
                 f"more sizes there" if p.npoints < 2 * side else "no statistically real cut lowers it")
            warnings.append(f"median relative error {p.median_rel_error:.1%} in {where} is above "
                            f"the threshold {settings.threshold:.1%}: {why}")
        if p.df == 0:
            warnings.append(f"{where} has as many sample points as constants ({p.npoints}): "
                            f"no standard errors or prediction intervals")
    return warnings


def _budget_text(blocked: tuple[Cut, str], settings: FitSettings) -> str:
    """Why a piece was not split although a statistically real cut exists: the setting that
    limits the intervals (or, `minpoints`, their size), its value, and the cut it kept out."""
    cut, setting = blocked
    where = (f"{cut.variable} = {number_text(cut.value)} "
             f"({'the trend test, ' if cut.test == 'trend' else ''}p = {cut.p_value:.2g})")
    if setting == "minpoints":
        return (f"`set minpoints {settings.minpoints}` leaves too few sample points for a cut; a smaller "
                f"one lets the fit cut at {where}")
    return (f"the interval budget (`set {setting} {getattr(settings, setting)}`) allows no further cut; "
            f"a larger one lets the fit cut at {where}")
