"""The C code of a shuffled nest of sampling loops (`#pragma cll for(...) shuffle`,
docs/pragma-language.md, Measurement order).

The nest's `for` lines first enumerate every combination of its loop variables, running only
the loop headers and saving the variables' bytes (memcpy, so any type keeps its exact value);
then the body runs once per combination in a seeded random order (Fisher-Yates), the variables
assigned before each body. After the nest the variables hold what the headers left them (as
after the plain loops). Each piece stays on its pragma's line, so `#line` mapping holds.
"""
from __future__ import annotations

from dataclasses import dataclass

from call.pragmas import For

SEED_VARIABLE = "CLL_SHUFFLE_SEED"
DEFAULT_SEED = 1


@dataclass(frozen=True)
class Nest:
    """A perfect nest of sampling loops whose outermost says `shuffle`: its loops, outermost
    first, and the variables their headers assign (saved and restored per combination)."""
    loops: tuple[For, ...]
    variables: tuple[str, ...]

    @property
    def tag(self) -> str:
        """The suffix of the generated names: the outermost `for`'s line."""
        return str(self.loops[0].line)


def loop_code(nest: Nest, loop: For) -> str:
    """The code of one `for` line of a shuffled nest: the outermost opens the table (and
    counts the rounds: a nest inside another loop gets a new order each time), each
    opens its header's loop, the innermost saves a combination, closes the header loops,
    shuffles, saves the exit values, and opens the loop over the combinations."""
    table = f"cll_sh_{nest.tag}"
    code = f"for ({loop.header}) {{"
    if loop is nest.loops[0]:
        code = (f"{{ static unsigned long long cll_round_{nest.tag}; "
                f"cll_shuffle {table} = {{0, 0, 0, 0, 0, {_width(nest)}}}; " + code)
    if loop is nest.loops[-1]:
        index = f"cll_i_{nest.tag}"
        code += (f" {_copy(nest, f'cll_shuffle_row(&{table})', save=True)} {'}' * len(nest.loops)}"
                 f" cll_shuffle_order(&{table}, {nest.tag}u, cll_round_{nest.tag}++);"
                 f" {_copy(nest, f'cll_shuffle_row(&{table})', save=True)}"
                 f" for (size_t {index} = 0; {index} < {table}.combos; {index}++) {{"
                 f" {_copy(nest, f'cll_shuffle_at(&{table}, {index})', save=False)}")
    return code


def end_code(nest: Nest, loop: For) -> str:
    """The code of the `end for` of `loop`: the innermost closes the loop over the
    combinations, the outermost restores the exit values and frees the table."""
    code = "}" if loop is nest.loops[-1] else ""
    if loop is nest.loops[0]:
        table = f"cll_sh_{nest.tag}"
        code += (f" {_copy(nest, f'cll_shuffle_at(&{table}, {table}.combos)', save=False)}"
                 f" cll_shuffle_free(&{table}); }}")
    return code.strip()


def _width(nest: Nest) -> str:
    return " + ".join(f"sizeof({v})" for v in nest.variables)


def _copy(nest: Nest, row: str, save: bool) -> str:
    """A block copying the nest's variables into (save) or out of the bytes at `row`."""
    copies, offset = [], "0"
    for variable in nest.variables:
        target, source = (f"cll_p + {offset}", f"&({variable})")
        pair = f"{target}, {source}" if save else f"{source}, {target}"
        copies.append(f"memcpy({pair}, sizeof({variable}));")
        offset = f"{offset} + sizeof({variable})" if offset != "0" else f"sizeof({variable})"
    return f"{{ unsigned char *cll_p = {row}; {' '.join(copies)} }}"


def helpers() -> list[str]:
    """The C lines the generated header holds when the file has a shuffled nest: the table,
    its growth, the seeded Fisher-Yates shuffle (splitmix64; seed from $CLL_SHUFFLE_SEED, a
    decimal unsigned integer below 2^64, else DEFAULT_SEED, mixed with the nest's line and round) and
    its release."""
    return f"""\
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* `shuffle` (docs/pragma-language.md, Measurement order): a nest's combinations, run in a
   seeded random order. rows: `width` bytes each; order: the shuffled indexes of `combos`. */
typedef struct {{ unsigned char *rows; size_t *order; size_t n, cap, combos, width; }} cll_shuffle;
static unsigned char *cll_shuffle_row(cll_shuffle *s) {{
    if (s->n == s->cap) {{
        s->cap = s->cap ? 2 * s->cap : 64;
        s->rows = realloc(s->rows, s->cap * s->width);
        if (s->rows == NULL) {{
            fprintf(stderr, "cll: out of memory for the combinations of a shuffled sampling loop\\n");
            exit(1);
        }}
    }}
    return s->rows + s->width * s->n++;
}}
static unsigned long long cll_shuffle_next(unsigned long long *x) {{
    unsigned long long z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}}
static void cll_shuffle_order(cll_shuffle *s, unsigned line, unsigned long long pass) {{
    const char *text = getenv("{SEED_VARIABLE}");
    char *end = NULL;
    unsigned long long x = {DEFAULT_SEED}ull;
    if (text != NULL && *text != '\\0') {{
        errno = 0;
        x = strtoull(text, &end, 10);
        if (*end != '\\0' || *text < '0' || *text > '9' || errno == ERANGE) {{
            fprintf(stderr, "cll: {SEED_VARIABLE}=%s is not a decimal unsigned integer from 0 to "
                    "18446744073709551615\\n", text);
            exit(2);
        }}
    }}
    x ^= 0xD1B54A32D192ED03ull * line ^ 0x8CB92BA72F3D8DD7ull * (pass + 1);
    s->combos = s->n;
    s->order = malloc((s->n ? s->n : 1) * sizeof *s->order);
    if (s->order == NULL) {{
        fprintf(stderr, "cll: out of memory for the order of a shuffled sampling loop\\n");
        exit(1);
    }}
    for (size_t i = 0; i < s->n; i++)
        s->order[i] = i;
    for (size_t i = s->n; i > 1; i--) {{
        size_t j = (size_t)(cll_shuffle_next(&x) % i), t = s->order[i - 1];
        s->order[i - 1] = s->order[j];
        s->order[j] = t;
    }}
}}
static unsigned char *cll_shuffle_at(cll_shuffle *s, size_t i) {{
    return s->rows + s->width * (i < s->combos ? s->order[i] : i);
}}
static void cll_shuffle_free(cll_shuffle *s) {{
    free(s->rows);
    free(s->order);
}}""".split("\n")
