"""The fitting settings' values (docs/llac-language.md, Settings): what each may be, checked
in one place for what a user types (`set NAME VALUE`) and for what a model file says (a file
whose settings no `set` could make is refused: predictions from it would use them)."""
from __future__ import annotations

import dataclasses
import math

from cll_grammar.span import suggest
from llac.errors import LlacError
from llac.fit import SETTING_WORDS, FitSettings

SWITCH_WORDS = {"on": True, "yes": True, "true": True, "off": False, "no": False, "false": False}
# the range of each whole-number setting: a bootstrap of 10^6 replicates or 10^9 intervals
# would run for hours, and the seed is a 32-bit number
WHOLE_RANGES = {"maxintervals": (1, 100), "minpoints": (0, 100_000), "seed": (0, 2**32 - 1),
                "bootstrap": (1, 9999), "maxpieces": (1, 1000)}
DEFAULTS = {f.name: f.default for f in dataclasses.fields(FitSettings)}


def setting_value(name: str, text: str) -> object:
    """The value of setting `name` (a key of DEFAULTS) that `text` says (5%, 0.05, 3, on,
    min), of its default's type; LlacError with one clear sentence when it cannot be one."""
    default = DEFAULTS[name]
    if isinstance(default, bool):
        if text.lower() not in SWITCH_WORDS:
            raise LlacError(f"{name} is on or off, not {text!r}")
        return SWITCH_WORDS[text.lower()]
    if isinstance(default, str):
        words = SETTING_WORDS[name]
        if text not in words:
            raise LlacError(f"{name} is one of {', '.join(words)}, not {text!r}{suggest(text, words)}")
        return text
    try:
        number = float(text[:-1]) / 100 if text.endswith("%") else float(text)
    except ValueError:
        raise LlacError(f"{name} takes a number, not {text!r}") from None
    if isinstance(default, int):
        low, high = WHOLE_RANGES[name]
        if not low <= number <= high or number != int(number):
            raise LlacError(f"{name} takes a whole number from {low} to {high}, not {text}")
        return int(number)
    if name == "threshold" and number == 0:   # split whenever the statistics allow (docs/method.md)
        return 0.0
    if not 0 < number < 1:
        bounds = "at least 0 and below 1" if name == "threshold" else "between 0 and 1"
        raise LlacError(f"{name} is a fraction {bounds} (or a percentage), not {text}")
    return number


def check_settings(settings: FitSettings) -> None:
    """Raise LlacError when `settings` (read from a model file) hold a value that `set` would
    refuse: each one as setting_value checks it, then alpha against bootstrap."""
    for name, default in DEFAULTS.items():
        value = getattr(settings, name)
        if isinstance(default, bool) != isinstance(value, bool):
            raise LlacError(f"{name} is on or off, not {value!r}")
        text = ("on" if value else "off") if isinstance(value, bool) else \
            value if isinstance(value, str) else repr(value)
        if setting_value(name, text) != value:
            raise LlacError(f"{name} cannot be {value!r}")
    check_test_size(dataclasses.asdict(settings), "alpha")


def check_test_size(settings: dict, changed: str) -> None:
    """Refuse an alpha that the split test can never reach with this many bootstrap replicates:
    its p-value is (1 + replicates at least as extreme) / (bootstrap + 1), never below
    1 / (bootstrap + 1), so with 1 / (bootstrap + 1) >= alpha no cut would ever be accepted
    (docs/method.md §8). This also keeps alpha above 1e-4, where prediction intervals are finite."""
    alpha, bootstrap = settings["alpha"], settings["bootstrap"]
    if (bootstrap + 1) * alpha > 1:
        return
    smallest, high = 1 / (bootstrap + 1), WHOLE_RANGES["bootstrap"][1]
    if (high + 1) * alpha <= 1:
        fix = f"alpha must be above 1/({high}+1) = {1 / (high + 1):g} (bootstrap is at most {high})"
    else:
        needed = math.floor(1 / alpha)
        needed += (needed + 1) * alpha <= 1
        fix = f"set bootstrap {needed} or more first" if changed == "alpha" else \
            f"keep bootstrap at {needed} or more, or set alpha above {smallest:.3g} first"
    raise LlacError(f"alpha {alpha:.3g} with bootstrap {bootstrap}: the split test's p-value is at least "
                    f"1/(bootstrap+1) = 1/{bootstrap + 1} = {smallest:.3g}, never below alpha, so no cut "
                    f"could ever be accepted; {fix}")
