"""Fuzz `call check` / `call translate` with mutated real annotated programs (the samples):
pragma lines deleted, duplicated, swapped, moved, edited character by character, cut short and
given a `shuffle` clause (with junk after it).
`call` must never print a traceback (exit 0 or 1, never the internal-error status 2), and a
translation that succeeds must compile whenever the plain program compiles (gcc -fsyntax-only,
on a smaller budget), but for C that a pragma names and the compiler finds missing there."""
import contextlib
import io
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from call import cli
from call.runtime_paths import include_dir, mpi_include_dir

SAMPLES = sorted((Path(__file__).resolve().parent.parent / "samples").glob("*/*.c"))
TEXTS = [path.read_text() for path in SAMPLES]
# characters a user (or a damaged file) puts into pragma lines
ALPHABET = st.sampled_from(list("abcfNPnx01279_[](){};,+-*/^.:=<> \t\\\"'#") + ["end", "for", "report",
                                                                              "sync", "parallel", "shuffle", "\n"])


def pragma_lines(lines: list[str]) -> list[int]:
    return [i for i, line in enumerate(lines) if line.lstrip().startswith("#pragma cll")]


@st.composite
def mutated_programs(draw, most=4):
    """(sample index, mutated text): one to `most` mutations of the sample's pragma lines."""
    index = draw(st.integers(0, len(TEXTS) - 1))
    lines = TEXTS[index].split("\n")
    for _ in range(draw(st.integers(1, most))):
        pragmas = pragma_lines(lines)
        if not pragmas:
            break
        at = draw(st.sampled_from(pragmas))
        kind = draw(st.sampled_from(["delete", "duplicate", "swap", "move", "edit", "truncate", "shuffle"]))
        if kind == "delete":
            del lines[at]
        elif kind == "duplicate":
            lines.insert(draw(st.integers(0, len(lines))), lines[at])
        elif kind == "swap":
            other = draw(st.sampled_from(pragmas))
            lines[at], lines[other] = lines[other], lines[at]
        elif kind == "move":
            line = lines.pop(at)
            lines.insert(draw(st.integers(0, len(lines))), line)
        elif kind == "edit":
            line = lines[at]
            start = line.index("#pragma cll") + len("#pragma cll")
            where = draw(st.integers(start, len(line)))
            cut = draw(st.integers(0, 3))
            lines[at] = line[:where] + draw(ALPHABET) + line[where + cut:]
        elif kind == "shuffle":    # the clause, and perhaps junk after it, on any pragma line
            junk = draw(st.lists(ALPHABET, max_size=2))
            lines[at] = lines[at].rstrip("\\ ") + " shuffle" + "".join(junk)
        else:
            lines[at] = lines[at][:draw(st.integers(0, len(lines[at])))]
    return index, "\n".join(lines)


def call_quietly(*args) -> tuple[int, str]:
    """Run `call` in this process as its command line does; (exit status, stderr)."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        status = cli.main(list(args))
    return status, err.getvalue()


def translate(text: str, work: Path, name: str) -> int:
    (work / name).write_text(text)
    status, err = call_quietly("check", str(work / name))
    assert status in (0, 1) and "Traceback" not in err, err
    status, err = call_quietly("translate", str(work / name))
    assert status in (0, 1) and "Traceback" not in err, err
    return status


@given(mutated_programs())
def test_mutated_programs_never_make_call_print_a_traceback(example):
    index, text = example
    with tempfile.TemporaryDirectory() as work:
        translate(text, Path(work), SAMPLES[index].name)


def compile_errors(compiler: str, source: Path, *flags) -> list[str]:
    """The `file:line:col: error:` lines of `compiler -fsyntax-only source`."""
    done = subprocess.run([compiler, "-fsyntax-only", "-fopenmp", *flags, str(source)],
                          cwd=source.parent, capture_output=True, text=True)
    errors = [line for line in done.stderr.splitlines() if ": error: " in line]
    assert done.returncode == 0 or errors, done.stderr
    return errors


@pytest.mark.skipif(shutil.which("gcc") is None or shutil.which("mpicc") is None,
                    reason="needs gcc and mpicc")
@settings(max_examples=60)
@given(mutated_programs(most=2))
def test_a_translation_compiles_whenever_the_plain_program_compiles(example):
    """...except where a pragma names C that is not there (a loop variable or formula variable
    used before its declaration): the compiler says so at that pragma's line, and only there."""
    index, text = example
    with tempfile.TemporaryDirectory() as work:
        work = Path(work)
        name = SAMPLES[index].name
        if translate(text, work, name) != 0:
            return
        compiler = "mpicc" if "MPI_Init" in text or "bsp_begin" in text else "gcc"
        if compile_errors(compiler, work / name, "-I", str(mpi_include_dir())):   # pub.h
            return
        output = work / (name[:-2] + ".cll.c")
        lines = text.split("\n")
        pragmas = {i + 1 for i in pragma_lines(lines)}
        pragmas |= {i + 2 for i in range(len(lines) - 1) if i + 1 in pragmas and lines[i].endswith("\\")}
        for error in compile_errors(compiler, output, "-I", str(include_dir()), "-I", str(mpi_include_dir())):
            where = error.split(": error: ")[0].split(":")
            assert where[0] == str(work / name) and int(where[1]) in pragmas, error
