"""Write the instrumented program: `prog.cll.c` (the user's file with each pragma line
replaced, on the same line, by calls into the runtime) and `prog.cll.h` (the experiments and
their registration), following runtime_c/cll.h."""
from __future__ import annotations

from pathlib import Path

from call import shuffle
from call.check import Program
from call.diagnostics import CallError, Diagnostic
from call.pragmas import Begin, End, EndFor, For, Parallel, Pragma, Report
from cll_grammar.columns import MPI_COLUMNS, PUB_COLUMNS

OPENMP_PROCS = "omp_in_parallel() ? omp_get_num_threads() : omp_get_max_threads()"


def c_string(text: str) -> str:
    """`text` as a C string literal (quotes, backslashes and control characters escaped)."""
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch.isprintable() and ch.isascii():
            out.append(ch)
        else:
            out.extend(f"\\{b:03o}" for b in ch.encode("utf-8", "surrogateescape"))
    return '"' + "".join(out) + '"'


def header_name(source: str) -> str:
    """The file name of the header generated for `source`: `PROG.cll.h` for `dir/PROG.c`."""
    name = Path(source).name
    return (name[:-2] if name.endswith(".c") else name) + ".cll.h"


def include_line(header_name: str, source: str) -> str:
    """`#include "NAME"` for the generated header. Unlike #line, #include takes the name
    verbatim (no escapes): a UTF-8 or spaced name is written as it is, and a name the
    directive cannot hold (a quote, backslash or line break) is a CallError."""
    bad = next((ch for ch in header_name if ch in '"\\\n\r'), None)
    if bad is not None:
        raise CallError([Diagnostic("error", source, 0, 0,
                                    f"the generated header {header_name!r} cannot be "
                                    f"#included: its name holds {bad!r}; rename the file")])
    return f'#include "{header_name}"'


def instrumented_source(program: Program, header_name: str) -> str:
    """The `.cll.c` text: includes the generated header, then the user's lines under
    `#line 1 "file"`, each pragma line replaced by its code so every line keeps its number."""
    lines = _carried_jumps(program)
    for directive, pragma in program.sites:
        indent = lines[directive.line - 1][:directive.column - 1]
        lines[directive.line - 1] = (indent if not indent.strip() else "") + _wrapped(pragma, program)
        for number in range(directive.line + 1, directive.last_line + 1):
            lines[number - 1] = ""
    head = [include_line(header_name, program.file), f"#line 1 {c_string(program.file)}"]
    return "\n".join(head + lines) + "\n"


JUMP_CODES = {"break": 1, "continue": 2}


def _carried_jumps(program: Program) -> list[str]:
    """The user's lines with each `break`/`continue` that leaves a sampling loop's body for a
    loop or switch outside it replaced, in place, by a jump past the sampling loop that says
    which (`do { cll_jump_L = 1; goto cll_out_L; } while (0)`, L the `for` pragma's line);
    there the `end for` code performs it, so it leaves what it left in the plain program."""
    lines = list(program.lines)
    for (line, column), (kind, loop) in sorted(program.jumps.items(), reverse=True):
        text = lines[line - 1]
        jump = (f"do {{ cll_jump_{loop.line} = {JUMP_CODES[kind]}; goto cll_out_{loop.line}; }} "
                f"while (0)")
        lines[line - 1] = text[:column - 1] + jump + text[column - 1 + len(kind):]
    return lines


def _wrapped(pragma: Pragma, program: Program) -> str:
    """The code of one pragma; the begin and end of an experiment that is the unbraced body of
    a control header also open and close the brace that keeps begin, statement and end that
    one body (`else { begin; stmt; end; }`)."""
    code = _statement(pragma, program)
    if pragma.site not in program.wrapped:
        return code
    return "{ " + code if isinstance(pragma, Begin) else code + " }"


def _statement(pragma: Pragma, program: Program) -> str:
    """The C code one pragma becomes: a single line, except a PUB `sync` begin, whose
    machine check carries #line directives (_machine_check)."""
    mpi, pub = _mpi_comm(program), _pub(program)
    layer = "cll_pub" if pub else "cll_mpi" if mpi else "cll"
    if isinstance(pragma, Begin):
        procs = f"cll_mpi_procs({mpi})" if mpi else "cll_procs()"
        places = dict(pragma.places)
        values = [f"(double)({procs})" if v == "P" else f"(double)({_placed(v, places.get(v), program)})"
                  for v in captured_variables(pragma, program)]
        values += ["0"] * len(measured_columns(program))
        sync = (f"cll_mpi_sync({mpi}); " if mpi else "cll_sync(); " if _openmp(program) else "") \
            if pragma.sync and not pub else ""
        machine = (", cll_machine" if pragma.sync else ", 0") if pub else ""
        if not values:
            return f"{{ {sync}cll_begin(&cll_exp_{pragma.name}, 0, CLL_HERE); }}"
        checked = _machine_check(pragma, program) if pub and pragma.sync else ("", "")
        return (f"{{ {checked[0]}{sync}double cll_v[] = {{{', '.join(values)}}}; "
                f"{layer}_begin(&cll_exp_{pragma.name}, cll_v{machine}, CLL_HERE); }}{checked[1]}"
                + _lines_after(pragma, program, places))
    if isinstance(pragma, End):
        return f"{layer}_end(&cll_exp_{pragma.name}, {c_string(pragma.site)}, CLL_HERE);"
    if isinstance(pragma, For) and pragma.site in program.nests:
        return shuffle.loop_code(program.nests[pragma.site], pragma)
    if isinstance(pragma, For):
        header = "; ".join(_placed(part, at, program) for part, at in pragma.parts) if pragma.parts else pragma.header
        loop = f"for ({header}) {{" + _lines_after(pragma, program, pragma.parts)
        return f"{{ int cll_jump_{pragma.line} = 0; {loop}" if program.exits(pragma) else loop
    if isinstance(pragma, EndFor):
        loop = program.closes.get(pragma.site)
        if loop is not None and loop.site in program.nests:
            return shuffle.end_code(program.nests[loop.site], loop)
        if loop is None or not program.exits(loop):
            return "}"
        performed = " ".join(f"if (cll_jump_{loop.line} == {JUMP_CODES[kind]}) {kind};"
                             for kind in program.exits(loop))
        return f"}} cll_out_{loop.line}: {performed} }}"
    if isinstance(pragma, Report):
        report = f"{layer}_report"
        if pragma.names is None:
            return f"{report}(0, 0);"
        names = ", ".join(c_string(n) for n in pragma.names)
        return (f"{{ static const char *const cll_names[] = {{{names}}}; "
                f"{report}(cll_names, {len(pragma.names)}); }}")
    assert isinstance(pragma, Parallel)
    return ""


def _placed(expression: str, at: tuple[int, int] | None, program: Program) -> str:
    """`expression` (a variable of a formula, a part of a `for` header) where the user wrote it:
    on a line of its own under `#line`, indented to its column, so that gcc's messages about it
    (an undeclared variable) point at it in the user's file; as it is where that is unknown."""
    if at is None or not expression:
        return expression
    line, column = at
    return f"\n#line {line} {c_string(program.file)}\n{' ' * (column - 1)}{expression}"


def _lines_after(pragma: Pragma, program: Program, placed) -> str:
    """After code that `_placed` spread over lines: the `#line` that gives the line after the
    pragma its number again (nothing when nothing was placed)."""
    return f"\n#line {pragma.line + 1} {c_string(program.file)}" if placed else ""


def _machine_check(pragma: Begin, program: Program) -> tuple[str, str]:
    """The code before and after a PUB `sync` begin that takes the BSP machine NAME of
    `parallel PUB NAME` as `t_bsp *cll_machine`, for a variable of type t_bsp or t_bsp *. Any
    other type selects cll_pub_not_a_machine (cll_pub.h), whose call is a compile error. NAME's
    first use and that call each stand under a #line at NAME's line and column in the user's
    file, so that gcc's message points at NAME in the `parallel` line, for another type and for
    an undeclared NAME alike (and the lines after the pragma keep their numbers)."""
    name, at, file = program.parallel.obj, program.parallel.obj_at, c_string(program.file)
    before = (f"t_bsp *cll_machine = _Generic(({_placed(name, at, program)}), t_bsp *: ({name}), "
              f"t_bsp: &({name}), default:{_placed('cll_pub_not_a_machine()', at, program)});\n"
              f"#line {pragma.line} {file}\n")
    return before, f"\n#line {pragma.line + 1} {file}"


def _openmp(program: Program) -> bool:
    return program.parallel is not None and program.parallel.model == "OpenMP"


def _pub(program: Program) -> bool:
    return program.parallel is not None and program.parallel.model == "PUB"


def _mpi_comm(program: Program) -> str | None:
    """The communicator whose size is P: the one of a `parallel MPI [COMM]` program (default
    MPI_COMM_WORLD); MPI_COMM_WORLD in a `parallel PUB` program (P is the whole machine's
    size, known where its NAME is not in scope); None otherwise."""
    if program.parallel is None or program.parallel.model not in ("MPI", "PUB"):
        return None
    return (program.parallel.model == "MPI" and program.parallel.obj) or "MPI_COMM_WORLD"


def measured_columns(program: Program) -> tuple[str, ...]:
    """The columns the runtime's layers fill after the captured variables: the MPI columns
    (MPI, PUB), then the PUB layer's `run` (PUB)."""
    if _mpi_comm(program) is None:
        return ()
    return MPI_COLUMNS + (PUB_COLUMNS if _pub(program) else ())


def captured_variables(begin: Begin, program: Program) -> list[str]:
    """The variables captured from C at begin: the formula's, then those of the working set
    (`bytes`) that the formula lacks; in an MPI or PUB program not the names its layers
    measure (they are columns appended after the captured ones)."""
    extra = begin.working_set.variables if begin.working_set else ()
    wanted = list(dict.fromkeys(begin.formula.variables + extra))
    return [v for v in wanted if v not in measured_columns(program)]


def instrumented_header(program: Program) -> str:
    """The `.cll.h` text: one static cll_experiment per experiment, the cll_program, P
    (`cll_procs()`), the OpenMP barrier for `sync`, and a constructor registering them. An MPI
    program includes cll_mpi.h (a PUB program cll_pub.h) instead of cll.h, and its
    experiments end with the measured columns."""
    openmp, mpi = _openmp(program), _mpi_comm(program)
    layer_header = "cll_pub.h" if _pub(program) else "cll_mpi.h" if mpi else "cll.h"
    out = [f"/* Generated by `call` from {program.file}: do not edit. */",
           "#ifndef CLL_GENERATED_H", "#define CLL_GENERATED_H",
           f'#include <{layer_header}>']   # <>: a cll.h of the program's own beside it cannot stand in
    if openmp:
        out.append("#include <omp.h>")
    if program.nests:
        out += shuffle.helpers()
    for name, begin in program.experiments.items():
        variables = captured_variables(begin, program) + list(measured_columns(program))
        if variables:
            out.append(f"static const char *const cll_vars_{name}[] = "
                       f"{{{', '.join(c_string(v) for v in variables)}}};")
        working_set = c_string(str(begin.working_set)) if begin.working_set else "0"
        out.append(f"static cll_experiment cll_exp_{name} = {{{c_string(name)}, "
                   f"{c_string(str(begin.formula))}, {c_string(begin.site)}, {len(variables)}, "
                   f"{f'cll_vars_{name}' if variables else '0'}, -1, {working_set}}};")
    if program.experiments:
        out.append("static cll_experiment *const cll_experiments[] = "
                   f"{{{', '.join(f'&cll_exp_{n}' for n in program.experiments)}}};")
    model = program.parallel.model if program.parallel else "none"
    out.append(f"static const cll_program cll_this_program = {{{c_string(program.file)}, "
               f"{c_string(model)}, {len(program.experiments)}, "
               f"{'cll_experiments' if program.experiments else '0'}}};")
    if not mpi:   # MPI, PUB: P is cll_mpi_procs(COMM) at each begin (COMM may be a local)
        out.append(f"static inline int cll_procs(void) {{ return {OPENMP_PROCS if openmp else '1'}; }}")
    if openmp:
        out += ["/* `sync` in OpenMP: a barrier of the enclosing parallel region, if any. */",
                "static inline void cll_sync(void) {", "    if (omp_in_parallel()) {",
                "#pragma omp barrier", "    }", "}",
                "/* A record's thread: its number in the team, and in nested parallel regions the",
                " * numbers of its ancestors too (mixed radix: outer * inner team size + inner), so",
                " * that no two threads of one region share a number. */",
                "static int cll_omp_thread(void) {",
                "    int id = 0, level = omp_get_level();",
                "    if (level <= 1)   /* not nested: its number in the team, as fast as before */",
                "        return omp_get_thread_num();",
                "    for (int l = 1; l <= level; l++)",
                "        id = id * omp_get_team_size(l) + omp_get_ancestor_thread_num(l);",
                "    return id;", "}"]
    out += ["__attribute__((constructor)) static void cll_register_this_file(void) {"]
    if openmp:
        out += ["    cll_set_procs(omp_get_max_threads(), 0);",
                "    cll_set_thread_id_function(cll_omp_thread);"]
    out += ["    cll_register(&cll_this_program);", "}", "#endif", ""]
    return "\n".join(out)
