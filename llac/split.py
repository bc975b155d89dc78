"""Interval splitting (the paper's sets ℵ): cut the variable space where the constants change.

A piece whose median relative error exceeds the threshold, or that predictions beyond the data
use (its box is unbounded above), is scanned for the best cut over
every variable (between consecutive distinct values, with enough points on each side); the
best cut is the one with the largest Chow F statistic on the relative (weighted) system, i.e.
the smallest relative residual sum of squares. It is accepted only if (a) the root-mean-square
relative error drops by more than `threshold` of its value, (b) a residual bootstrap of the sup-F
statistic under the no-split model gives p < alpha (calibrated for the search over all
cuts), (c) the BIC decreases, and (d) it moves the fitted times on one side by more than
half the threshold (median over that side). A cut of a piece that predictions beyond the data
use leaves that upper side spanning at least a factor EXTRAPOLATION_SPAN or holding at least
three points per constant. Pieces are split best first: an accepted cut of a piece
that predictions beyond the data use is made first, then the one that lowers the relative
residual sum of squares most, and both sides are searched in turn.

Then a **trend cut**: a cost that keeps rising (or falling) against the formula through the
piece that predictions beyond the data use, as a working set passing from the last cache into
memory does over several sizes, is a ramp, not a step, and the Chow test above misses it, while
the piece's constants average over the ramp and predictions beyond it miss by its height. When
that piece's relative residuals correlate with one of its variables (Spearman, p < alpha, at
least TREND_POINTS distinct values) and the upper half of those values, fitted alone, moves the
fitted times there by more than half the threshold, the piece is cut at the middle of its
values, within the interval budget: predictions beyond the data then use the upper half. The
change must also exceed the piece's repetition spread (the median over its points of
(median - min) / min of their repetitions): on cores shared with busy programs, descheduling
slows the larger sizes more, a trend in the wall time that the repetitions' own disagreement
shows to be the load's, not the program's.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from llac.advice import spearman
from llac.fit import FitSettings, RelativeFit, relative_fit
from llac.noise import typical

EXTRAPOLATION_SPAN = 2.0   # the piece predictions beyond the data use spans at least this factor
MAX_CANDIDATES = 48        # cut positions tried per variable and piece (evenly among valid ones)
CELLS_PER_CHUNK = 2_000_000  # points x bootstrap columns held in memory at once
BOOTSTRAP_POINTS = 4096     # larger pieces are bootstrapped on a random subset of this size
TREND_POINTS = 6           # fewest distinct values of a variable a trend cut tests


@dataclass(frozen=True)
class Cut:
    """An accepted split: `variable <= value` goes left, `> value` right. The errors are
    root-mean-square relative errors of the piece before and of both sides after. `test` is
    "chow" (a step in the constants: F is the Chow F statistic) or "trend" (a ramp in the piece
    predictions beyond the data use: F is Spearman's rho of its residuals with `variable`);
    p_value is that test's."""
    variable: str
    value: float
    F: float
    p_value: float
    delta_bic: float
    error_before: float
    error_after: float
    test: str = "chow"


@dataclass(frozen=True)
class Leaf:
    """A final piece: its box, the sample-point rows in it and its relative fit (of the
    formula's terms less the `dropped` ones, (term index, p-value when dropped), and less
    those `at_bound`)."""
    region: dict[str, tuple[float, float]]
    rows: np.ndarray
    fit: RelativeFit
    dropped: tuple[tuple[int, float], ...] = ()
    at_bound: tuple[int, ...] = ()    # terms whose constant is held at its bound 0
    blocked: tuple[Cut, str] | None = None  # a cut the budget (the setting named) did not allow


@dataclass
class _Search:
    """What the search shares: the data, settings, random stream and cuts made so far."""
    design: np.ndarray
    time: np.ndarray
    variables: dict[str, np.ndarray]
    settings: FitSettings
    rng: np.random.Generator
    minpoints: int
    bounded: np.ndarray       # the columns whose constants are kept >= 0
    noise: np.ndarray         # each point's noise factor (relative_fit)
    spread: np.ndarray        # each point's repetition spread, (median - min) / min (NaN: one)
    cuts: list[Cut] = field(default_factory=list)
    cut_values: dict[str, set] = field(default_factory=dict)


def split_points(design: np.ndarray, time: np.ndarray, variables: dict[str, np.ndarray],
                 settings: FitSettings, bounded: np.ndarray, noise: np.ndarray,
                 spread: np.ndarray | None = None) -> tuple[list[Leaf], list[Cut]]:
    """Split the sample points into pieces with their own constants; return leaves and cuts.

    Best first: of all pieces with an acceptable cut, one that predictions beyond the data
    use is split first, else the one whose cut lowers the relative residual sum of squares
    most, so the interval budget (`maxintervals`, `maxpieces`) goes where extrapolation needs
    it and then to the largest changes, not to the smallest values first. Leaves come in tree order (left, i.e. smaller values, first); the first leaf's
    region has -inf lower bounds. `bounded` and `noise` are relative_fit's (the constants
    kept >= 0, each point's noise factor); `spread` is each point's repetition spread (None:
    unknown, as without repetitions), which a trend cut must exceed.
    """
    k = design.shape[1]
    search = _Search(design, time, variables, settings, np.random.default_rng(settings.seed),
                     max(settings.minpoints, k + 1), bounded, noise,
                     np.full(len(time), np.nan) if spread is None else np.asarray(spread, dtype=float))
    root = _Node((), np.arange(len(time)), {v: (-np.inf, np.inf) for v in variables},
                 relative_fit(design, time, bounded, noise))
    done, open_, blocked = [], [(root, _propose(search, root))], {}
    while open_:
        best = max(range(len(open_)), key=lambda i: _priority(*open_[i]))
        node, proposal = open_.pop(best)
        if proposal is None:
            done.append(node)
        elif len(search.cuts) + 1 >= settings.maxpieces:
            done.append(node)
            blocked[node.path] = (proposal.cut, "maxpieces")
        elif proposal.cut.variable not in _allowed(search):   # its budget went elsewhere
            open_.append((node, _propose(search, node)))
        else:
            _accept(search, proposal.cut)
            open_ += [(child, _propose(search, child)) for child in proposal.children(node)]
    finished, trend_blocked = [], {}
    for node in done:
        children, kept_out = _trend_children(search, node)
        finished += children
        if kept_out:
            trend_blocked[node.path] = kept_out
    # the cut a larger budget lets the fit make: the search's own (what it cuts first), else
    # the trend cut, which is only looked for once the search is done
    return [Leaf(n.region, n.rows, n.fit, (), n.fit.at_bound, blocked.get(n.path) or _over_budget(search, n)
                 or trend_blocked.get(n.path) or _too_few_points(search, n))
            for n in sorted(finished, key=lambda n: n.path)], search.cuts


def _over_budget(search: _Search, node: _Node) -> tuple[Cut, str] | None:
    """The cut `maxintervals` kept out of a finished piece whose error is above the threshold:
    the acceptable cut on a variable whose intervals are used up (searched with a fresh random
    stream, so the model does not change), or None. The fit's warning then blames the setting,
    not the statistics."""
    if len(_allowed(search)) == len(search.variables):
        return None
    return _kept_out(search, node, "maxintervals")


def _too_few_points(search: _Search, node: _Node) -> tuple[Cut, str] | None:
    """The cut `minpoints` kept out of a finished piece whose error is above the threshold:
    the acceptable cut with sides of the fewest points a fit needs (searched with a fresh
    random stream), when `minpoints` asks for more; else None."""
    fewest = search.design.shape[1] + 1
    if search.minpoints <= fewest or len(node.rows) >= 2 * search.minpoints + 2:
        return None
    return _kept_out(search, node, "minpoints", minpoints=fewest)


def _kept_out(search: _Search, node: _Node, setting: str, **relaxed) -> tuple[Cut, str] | None:
    """The acceptable cut of a finished piece whose error is above the threshold, on any
    variable, with the search's `relaxed` fields (searched with a fresh random stream, so the
    model does not change), blamed on `setting`; None when there is none."""
    if not search.settings.split or node.fit.median_rel_error <= search.settings.threshold:
        return None
    fresh = replace(search, rng=np.random.default_rng(search.settings.seed), **relaxed)
    proposal = _propose(fresh, node, list(search.variables))
    return (proposal.cut, setting) if proposal is not None else None


@dataclass(frozen=True)
class _Node:
    """A piece during the search: its place in the tree (0 = left, 1 = right at each cut),
    sample-point rows, box and relative fit."""
    path: tuple[int, ...]
    rows: np.ndarray
    region: dict
    fit: RelativeFit


@dataclass(frozen=True)
class _Proposal:
    """An acceptable cut of a piece, with the fits of both sides and the SSR it removes."""
    cut: Cut
    left: np.ndarray          # mask over the piece's rows
    sides: tuple[RelativeFit, RelativeFit]
    gain: float

    def children(self, node: _Node) -> list[_Node]:
        """The two pieces the cut makes of `node`."""
        v, value = self.cut.variable, self.cut.value
        low, high = node.region[v]
        return [_Node(node.path + (0,), node.rows[self.left], {**node.region, v: (low, value)}, self.sides[0]),
                _Node(node.path + (1,), node.rows[~self.left], {**node.region, v: (value, high)}, self.sides[1])]


def _priority(node: _Node, proposal: _Proposal | None) -> tuple:
    """Priority of a piece in the best-first search: finished pieces first, then pieces that
    predictions beyond the data use, then by gain."""
    return (1, False, 0.0) if proposal is None else (0, _extrapolated(node), proposal.gain)


def _extrapolated(node: _Node) -> bool:
    """Whether predictions beyond the data use this piece: its box is unbounded above."""
    return any(high == np.inf for _, high in node.region.values())


def _allowed(search: _Search) -> list[str]:
    """The variables that may still take another cut under `maxintervals`."""
    return [v for v in search.variables
            if len(search.cut_values.get(v, ())) + 2 <= search.settings.maxintervals]


def _propose(search: _Search, node: _Node, variables: list[str] | None = None) -> _Proposal | None:
    """The best cut of this piece on `variables` (default: those `maxintervals` still allows)
    if it passes the acceptance tests (module docstring), else None."""
    settings, rows, fit = search.settings, node.rows, node.fit
    if not settings.split or (fit.median_rel_error <= settings.threshold and not _extrapolated(node)):
        return None
    found = _best_cut(search, rows, fit, _allowed(search) if variables is None else variables, node.region)
    if found is None:
        return None
    variable, value, F, p_value = found
    proposal = _split(search, node, Cut(variable, value, F, p_value, 0.0, 0.0, 0.0))
    cut = proposal.cut
    if not (cut.error_before - cut.error_after > settings.threshold * cut.error_before and p_value < settings.alpha
            and cut.delta_bic < 0 and _change(fit, proposal.sides, (proposal.left, ~proposal.left)) > settings.threshold / 2):
        return None
    return proposal


def _split(search: _Search, node: _Node, cut: Cut) -> _Proposal:
    """`node` cut at `cut`'s variable and value: both sides fitted, and `cut` completed with the
    change in BIC and the root-mean-square relative errors before and after."""
    rows, time = node.rows, search.time[node.rows]
    left = search.variables[cut.variable][rows] <= cut.value
    sides = tuple(relative_fit(search.design[rows[m]], time[m], search.bounded, search.noise[rows[m]])
                  for m in (left, ~left))
    n, k = len(rows), search.design.shape[1]
    ssr_before, ssr_after = node.fit.ssr(time), sum(s.ssr(time[m]) for s, m in zip(sides, (left, ~left)))
    cut = replace(cut, delta_bic=float(_bic(ssr_after, n, 2 * k + 1) - _bic(ssr_before, n, k)),
                  error_before=float(np.sqrt(ssr_before / n)), error_after=float(np.sqrt(ssr_after / n)))
    return _Proposal(cut, left, sides, ssr_before - ssr_after)


def _trend_children(search: _Search, node: _Node) -> tuple[list[_Node], tuple[Cut, str] | None]:
    """`node`, or the two pieces of its trend cut (module docstring) when it has one; and the
    trend cut that the interval budget kept out, with the setting that did (else None), so
    that the fit's warning names the setting rather than the statistics."""
    if not search.settings.split or not _extrapolated(node):
        return [node], None
    relative = search.time[node.rows] / node.fit.fitted - 1
    for v in search.variables:
        x = search.variables[v][node.rows]
        values = np.unique(x)
        if node.region[v][1] != np.inf or len(values) < TREND_POINTS:
            continue
        rho, p_value = spearman(x, relative)
        middle = len(values) // 2
        value = float(cut_value(values[[middle - 1]], values[[middle]])[0])
        masks = (x <= value, x > value)
        designs = [search.design[node.rows[m]] for m in masks]
        if not p_value < search.settings.alpha or min(np.sum(m) for m in masks) < search.minpoints \
                or not np.all(_full_rank(np.stack([d.T @ d for d in designs]))):
            continue
        proposal = _split(search, node, Cut(v, value, rho, p_value, 0.0, 0.0, 0.0, "trend"))
        if not _change(node.fit, proposal.sides, masks) > max(search.settings.threshold / 2, _spread(search, node)):
            continue
        if v not in _allowed(search):
            return [node], (proposal.cut, "maxintervals")
        if len(search.cuts) + 1 >= search.settings.maxpieces:
            return [node], (proposal.cut, "maxpieces")
        _accept(search, proposal.cut)
        return proposal.children(node), None
    return [node], None


def _accept(search: _Search, cut: Cut) -> None:
    """Record an accepted cut: in the model's cuts, and in its variable's interval budget."""
    search.cuts.append(cut)
    search.cut_values.setdefault(cut.variable, set()).add(cut.value)


def _spread(search: _Search, node: _Node) -> float:
    """The median repetition spread of the piece's points (0 where none has repetitions)."""
    return float(np.nan_to_num(typical(search.spread[node.rows])))


def _change(whole: RelativeFit, sides: tuple[RelativeFit, RelativeFit], masks) -> float:
    """How much a cut changes the model where it was measured: for each side, the median of
    |side's fitted / whole piece's fitted - 1| over its points; the larger of the two. A cut
    that moves the fitted times by less than half the threshold on both sides is not worth an
    interval, however significant: on a machine with serially correlated noise (bursts of load
    slow several neighbouring sizes) such cuts are the false splits."""
    return max(float(np.median(np.abs(side.fitted / whole.fitted[mask] - 1)))
               for side, mask in zip(sides, masks))


def _bic(ssr: float, n: int, parameters: int) -> float:
    """Gaussian BIC of a relative least-squares fit."""
    return n * np.log(max(ssr, 1e-300) / n) + parameters * np.log(n)


@dataclass(frozen=True)
class _Scan:
    """One variable's candidate cuts in a piece, with the Gram matrices that do not change
    between bootstrap replicates."""
    order: np.ndarray
    bounds: np.ndarray         # block boundaries in sorted order; cut j leaves bounds[j+1] points left
    values: np.ndarray         # the cut values
    gram_left: np.ndarray      # (m, k, k)
    gram_right: np.ndarray
    valid: np.ndarray          # both sides full rank


def _best_cut(search: _Search, rows: np.ndarray, fit: RelativeFit, allowed: list[str], region: dict):
    """(variable, value, F, bootstrap p) of the largest-F cut in this piece, or None.

    The F statistics use the piece's relative system (design and times divided by the
    fit's base) with those weights held fixed, so every candidate and every bootstrap
    replicate is a linear least-squares problem solved from block Gram matrices. A cut of a
    variable in which the piece is unbounded above must leave the upper side, which
    predictions beyond the data will use, spanning at least a factor EXTRAPOLATION_SPAN or
    holding three points per constant.
    """
    design, time = search.design[rows], search.time[rows]
    scale = np.abs(design).max(axis=0)
    weighted = design / np.where(scale > 0, scale, 1.0) / fit.base[:, None]
    observed = time / fit.base
    x = {v: search.variables[v][rows] for v in allowed}
    spans = {v: EXTRAPOLATION_SPAN if region[v][1] == np.inf else 1.0 for v in allowed}
    scans = _scans(weighted, x, search.minpoints, spans)
    if not scans:
        return None
    first = _statistics(scans, weighted, observed[:, None])
    variable = max(first, key=lambda v: np.max(first[v]))
    j = int(np.argmax(first[variable]))
    F = float(first[variable][j, 0])
    if F == -np.inf:
        return None
    sup = _bootstrap_sup(search, weighted, observed, x, spans)
    p_value = (1 + np.sum(sup >= F)) / (len(sup) + 1)
    return variable, float(scans[variable].values[j]), F, float(p_value)


def _bootstrap_sup(search: _Search, weighted: np.ndarray, observed: np.ndarray,
                   x: dict[str, np.ndarray], spans: dict[str, float]) -> np.ndarray:
    """The sup-F statistic over all candidate cuts for each residual-bootstrap replicate of
    the no-split model. Pieces with more than BOOTSTRAP_POINTS points are bootstrapped on a
    random subset of that size (the null distribution of sup-F does not depend on n)."""
    n, k = weighted.shape
    null = weighted @ np.linalg.lstsq(weighted, observed, rcond=None)[0]
    residuals = (observed - null) - np.mean(observed - null)
    residuals *= np.sqrt(n / (n - k))
    rng = search.rng
    if n > BOOTSTRAP_POINTS:
        subset = np.sort(rng.choice(n, BOOTSTRAP_POINTS, replace=False))
        weighted, null, x = weighted[subset], null[subset], {v: a[subset] for v, a in x.items()}
    scans = _scans(weighted, x, search.minpoints, spans)
    if not scans:
        return np.zeros(0)
    replicates = search.settings.bootstrap
    chunk = max(1, min(replicates, CELLS_PER_CHUNK // len(null)))
    sup = []
    for start in range(0, replicates, chunk):
        Y = null[:, None] + residuals[rng.integers(0, n, size=(len(null), min(chunk, replicates - start)))]
        stats = _statistics(scans, weighted, Y)
        sup.append(np.max(np.concatenate(list(stats.values())), axis=0))
    return np.concatenate(sup)


def _scans(weighted: np.ndarray, x: dict[str, np.ndarray], minpoints: int,
           spans: dict[str, float]) -> dict[str, "_Scan"]:
    """The candidate cuts of each variable that has any."""
    return {v: s for v, values in x.items() if (s := _scan(weighted, values, minpoints, spans[v])) is not None}


def _statistics(scans: dict[str, "_Scan"], weighted: np.ndarray, Y: np.ndarray) -> dict[str, np.ndarray]:
    """Chow F of every candidate cut of every variable (rows) for each data column of Y."""
    gram = weighted.T @ weighted
    s0 = np.sum(Y * Y, axis=0) - _quadratic(gram[None], (weighted.T @ Y)[None])[0]
    return {v: _f_statistics(s, weighted, Y, s0) for v, s in scans.items()}


def _scan(weighted: np.ndarray, x: np.ndarray, minpoints: int, span: float) -> _Scan | None:
    """The candidate cuts of one variable: between consecutive distinct values, at least
    `minpoints` points on each side, the upper side's values spanning at least a factor
    `span` (when they are positive) or holding at least 3 points per constant, at most
    MAX_CANDIDATES evenly spread."""
    n = len(x)
    order = np.argsort(x, kind="stable")
    xs = x[order]
    positions = np.flatnonzero(xs[1:] > xs[:-1]) + 1
    positions = positions[(positions >= minpoints) & (n - positions >= minpoints)]
    if span > 1 and xs[0] > 0:
        positions = positions[(xs[-1] >= span * xs[positions]) | (n - positions >= 3 * weighted.shape[1])]
    if len(positions) == 0:
        return None
    if len(positions) > MAX_CANDIDATES:
        positions = np.unique(positions[np.linspace(0, len(positions) - 1, MAX_CANDIDATES).round().astype(int)])
    bounds = np.concatenate([[0], positions, [n]])
    sorted_w = weighted[order]
    blocks = np.stack([sorted_w[a:b].T @ sorted_w[a:b] for a, b in zip(bounds[:-1], bounds[1:])])
    gram_left = np.cumsum(blocks, axis=0)[:-1]
    gram_right = gram_left[-1] + blocks[-1] - gram_left
    return _Scan(order, bounds, cut_value(xs[positions - 1], xs[positions]), gram_left, gram_right,
                 _full_rank(gram_left) & _full_rank(gram_right))


def cut_value(below: np.ndarray, above: np.ndarray) -> np.ndarray:
    """Where to cut between two consecutive sample values: the geometric mean when both are
    positive (variables are usually sampled geometrically), else the arithmetic mean."""
    positive = (below > 0) & (above > 0)
    with np.errstate(invalid="ignore", over="ignore"):   # sqrt of each: no overflow at 1e200 (their product is inf)
        return np.where(positive, np.sqrt(np.abs(below)) * np.sqrt(np.abs(above)), below / 2 + above / 2)


def _full_rank(grams: np.ndarray) -> np.ndarray:
    """Whether each Gram matrix is safely invertible (its correlation form well conditioned)."""
    diag = np.sqrt(np.einsum("mii->mi", grams))
    ok = np.all(diag > 0, axis=1)
    safe = np.where(ok[:, None], diag, 1.0)
    correlation = grams / (safe[:, :, None] * safe[:, None, :])
    return ok & (np.linalg.eigvalsh(correlation)[:, 0] > 1e-10)


def _quadratic(grams: np.ndarray, cross: np.ndarray) -> np.ndarray:
    """c' G⁻¹ c for each stacked Gram matrix and each column of the cross products."""
    return np.sum(cross * np.linalg.solve(grams, cross), axis=1)


def _f_statistics(scan: _Scan, weighted: np.ndarray, Y: np.ndarray, s0: np.ndarray) -> np.ndarray:
    """Chow F statistic of every candidate cut (rows) for every data column of Y."""
    n, k = weighted.shape
    sorted_w, sorted_y = weighted[scan.order], Y[scan.order]
    pairs = list(zip(scan.bounds[:-1], scan.bounds[1:]))
    cross = np.cumsum(np.stack([sorted_w[a:b].T @ sorted_y[a:b] for a, b in pairs]), axis=0)
    squares = np.cumsum(np.stack([np.sum(sorted_y[a:b] ** 2, axis=0) for a, b in pairs]), axis=0)
    eye = np.eye(k)[None]
    valid = scan.valid[:, None, None]
    left = squares[:-1] - _quadratic(np.where(valid, scan.gram_left, eye), cross[:-1])
    right = (squares[-1] - squares[:-1]) - _quadratic(np.where(valid, scan.gram_right, eye),
                                                      cross[-1] - cross[:-1])
    ssr = np.maximum(left + right, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        F = ((s0 - ssr) / k) / (ssr / (n - 2 * k))
    F = np.nan_to_num(F, nan=0.0, posinf=np.inf)
    F[~scan.valid] = -np.inf
    return F
