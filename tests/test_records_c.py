"""The bulk converter in C (`llac._records`, runtime_c/llac_records.c) accepts exactly the
numbers the reader's per-line Python path accepts, with the same values, and checks each
line's shape itself."""
import math

import numpy as np
from hypothesis import given, strategies as st

from llac._records import ffi, lib
from llac.records import plain_float


def convert(text: bytes, nlines: int, ncols: int, named: bool = True):
    """(lines converted, values) of the C converter."""
    out = np.empty((nlines, ncols))
    done = lib.llac_parse_records(text, len(text), nlines, int(named), ncols, ffi.cast("double *", out.ctypes.data))
    return done, out


def same(a: float, b: float) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b))


@given(st.text(alphabet="0123456789.eE+-_naifNIFxtyp", min_size=1, max_size=14))
def test_c_accepts_what_python_accepts(word):
    data = word.encode()
    try:
        expected = plain_float(data)
    except ValueError:
        expected = None
    done, out = convert(b"f " + data + b"\n", 1, 1)
    assert (done == 1) == (expected is not None), word
    if expected is not None:
        assert same(out[0, 0], expected) and math.copysign(1, out[0, 0]) == math.copysign(1, expected)


@given(st.floats(allow_nan=False, width=64))
def test_shortest_repr_reads_back_exactly(value):
    done, out = convert(f"f 0 {value!r}\n".encode(), 1, 2)
    assert done == 1 and out[0, 1] == value


def test_each_line_must_hold_exactly_its_values():
    assert convert(b"f 1 2\nf 3 4\n", 2, 2)[0] == 2
    assert convert(b"1 2\n3 4\n", 2, 2, named=False)[0] == 2
    assert convert(b"f 1 2\nf 3\nf 4 5 6\n", 3, 2)[0] == 1      # line 1 (0-based) lacks a value
    assert convert(b"f 1 2 3\nf 4\n", 2, 2)[0] == 0             # a value too many: no compensation
    assert convert(b"f 1 2", 1, 2)[0] == 0                      # no newline: cut short
    assert convert(b"f 1 2\n", 2, 2)[0] == 1                    # fewer lines than announced
    assert convert(b"f 1,5 2\n", 1, 2)[0] == 0


@given(st.integers(0, 10**17), st.integers(0, 17), st.integers(-30, 30), st.sampled_from(["", "-", "+"]),
       st.sampled_from(["e", "E"]))
def test_decimals_near_the_fast_paths_limits_read_as_float_does(mantissa, point, exponent, sign, e):
    """Clinger's fast path (at most 2^53 and 10^22) and strtod beyond it give float()'s value."""
    digits = str(mantissa)
    point = min(point, len(digits))
    word = f"{sign}{digits[:len(digits) - point]}.{digits[len(digits) - point:]}{e}{exponent}"
    done, out = convert(f"f {word}\n".encode(), 1, 1)
    assert done == 1 and out[0, 0] == float(word) and math.copysign(1, out[0, 0]) == math.copysign(1, float(word)), word
