"""The knees of the memory mountain: where the cost per access jumps as the working set
outgrows a cache (docs/machine.md, "The knee rule").

The curve is the read cost per access at stride = line size by working-set size (a geometric
grid). It is a staircase: one plateau per cache level, then memory. The rule:

1. Cut log(cost) into at most `levels + 1` pieces, each constant and at least two grid points
   long, with the least squared error (dynamic programming: exact, and cheap for ~30 points).
2. Keep a cut only where the next piece's median cost is at least JUMP times the previous
   one's (a real step, not noise); neighbouring pieces of a dropped cut merge.
3. The knee of a kept cut is the largest working set, at or below the cut, whose cost has
   risen less than a quarter of the way (in log) from the lower plateau to the upper one: the
   cache's measured size, as the last size that still fits.
4. Knees less than a factor MERGE (4) apart are one step cut in two (a ramp, as memory's;
   caches of successive levels differ more): the smaller stands.
5. The knees, smallest first, go to the cache levels smallest first, each knee to the level
   whose reported size is nearest in log (order kept; a level may stay without a knee).
"""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from cll_grammar.machine import CacheLevel

JUMP = 1.2            # the least cost ratio between plateaus that counts as a step
RISE_FRACTION = 0.25  # how far up the step (in log) a point may be and still fit
MIN_PIECE = 2         # grid points per plateau at least
MERGE = 4.0           # knees closer than this factor are one step (caches differ by more)


def _segment(values: np.ndarray, pieces: int) -> list[int]:
    """The start indices (after the first) of the best cut of `values` into `pieces`
    constant pieces of at least MIN_PIECE points, by least squares; fewer when too short."""
    n = len(values)
    pieces = min(pieces, n // MIN_PIECE)
    if pieces <= 1:
        return []
    prefix = np.concatenate([[0.0], np.cumsum(values)])
    squares = np.concatenate([[0.0], np.cumsum(values ** 2)])

    def cost(i: int, j: int) -> float:   # squared error of values[i:j] about their mean
        total = prefix[j] - prefix[i]
        return squares[j] - squares[i] - total * total / (j - i)

    best = np.full((pieces + 1, n + 1), math.inf)
    back = np.zeros((pieces + 1, n + 1), dtype=int)
    best[0, 0] = 0.0
    for k in range(1, pieces + 1):
        for j in range(k * MIN_PIECE, n + 1):
            for i in range((k - 1) * MIN_PIECE, j - MIN_PIECE + 1):
                candidate = best[k - 1, i] + cost(i, j)
                if candidate < best[k, j]:
                    best[k, j], back[k, j] = candidate, i
    cuts, j = [], n
    for k in range(pieces, 0, -1):
        j = back[k, j]
        cuts.append(j)
    return sorted(c for c in cuts if c > 0)


def _kept_cuts(log_cost: np.ndarray, cuts: list[int]) -> list[int]:
    """The cuts whose step up is at least JUMP, merging the pieces of dropped ones (the
    smallest step is dropped first, then the steps are judged again)."""
    cuts = list(cuts)
    while cuts:
        bounds = [0, *cuts, len(log_cost)]
        levels = [np.median(log_cost[a:b]) for a, b in zip(bounds, bounds[1:])]
        steps = [upper - lower for lower, upper in zip(levels, levels[1:])]
        smallest = int(np.argmin(steps))
        if steps[smallest] >= math.log(JUMP):
            return cuts
        del cuts[smallest]
    return cuts


def knee_sizes(working_sets: list[int], seconds: list[float], levels: int) -> list[int]:
    """The measured cache sizes (bytes), smallest first, from a cost-per-access curve over
    increasing working sets, looking for at most `levels` steps (the rule of the module
    docstring)."""
    if len(working_sets) != len(seconds) or any(s <= 0 for s in seconds):
        raise ValueError("knee_sizes needs one positive cost per working set")
    if not seconds:
        return []
    log_cost = np.log(np.asarray(seconds, dtype=float))
    cuts = _kept_cuts(log_cost, _segment(log_cost, levels + 1))
    bounds = [0, *cuts, len(log_cost)]
    plateaus = [np.median(log_cost[a:b]) for a, b in zip(bounds, bounds[1:])]
    knees = []
    for piece, cut in enumerate(cuts):
        lower, upper = plateaus[piece], plateaus[piece + 1]
        fits = lower + RISE_FRACTION * (upper - lower)
        last = cut - 1
        while last > bounds[piece] and log_cost[last] > fits:
            last -= 1
        if not knees or working_sets[last] >= MERGE * knees[-1]:
            knees.append(working_sets[last])
    return knees


def assign_knees(caches: list[CacheLevel], knees: list[int]) -> list[CacheLevel]:
    """`caches` with measured_bytes set on the data and unified levels from `knees`: in
    order, each knee to a level, minimizing the total log distance to the reported sizes."""
    targets = sorted((c for c in caches if c.kind in ("Data", "Unified")), key=lambda c: c.level)
    sizes = [math.log2(c.reported_bytes) for c in targets]
    knees = sorted(knees)[:len(targets)]
    # best[i][j]: least distance placing the first i knees on the first j levels
    best = [[math.inf] * (len(targets) + 1) for _ in range(len(knees) + 1)]
    best[0] = [0.0] * (len(targets) + 1)
    for i in range(1, len(knees) + 1):
        for j in range(i, len(targets) + 1):
            best[i][j] = min(best[i][j - 1],
                             best[i - 1][j - 1] + abs(math.log2(knees[i - 1]) - sizes[j - 1]))
    measured, j = {}, len(targets)
    for i in range(len(knees), 0, -1):
        while best[i][j] == best[i][j - 1]:
            j -= 1
        measured[id(targets[j - 1])] = knees[i - 1]
        j -= 1
    return [replace(c, measured_bytes=measured[id(c)]) if id(c) in measured else c for c in caches]
