"""The OpenMP constructs whose statement not every thread of the team runs together
(`single`, `master`, `masked`, `critical`, `ordered`, the body of `for`/`loop`/`sections`,
a `task`): a `sync` experiment inside one waits at a barrier that the other threads never
reach, so the run would hang (gcc rejects a literal `#pragma omp barrier` there). A
`parallel` region nested inside one makes a new team, whose threads all reach it again."""
from __future__ import annotations

import re
from dataclasses import dataclass

from call.clex import CodeToken, Directive
from call.jumps import statement_end

# the words of an OpenMP directive's name (`parallel for`, `target teams distribute`...)
_CONSTRUCT_WORDS = {"parallel", "for", "loop", "simd", "sections", "section", "single", "master",
                    "masked", "critical", "ordered", "task", "taskloop", "distribute", "teams",
                    "target"}
# why the threads of the team do not all reach a statement of each such construct together
_REASONS = {"single": "only one thread reaches it", "master": "only one thread reaches it",
            "masked": "only one thread reaches it",
            "critical": "the threads reach it one at a time",
            "ordered": "the threads reach it one at a time",
            "for": "each iteration runs on one thread", "loop": "each iteration runs on one thread",
            "taskloop": "each iteration runs on one thread",
            "distribute": "each iteration runs on one thread",
            "sections": "each section runs on one thread", "section": "each section runs on one thread",
            "task": "a task runs on one thread"}


@dataclass(frozen=True)
class Partial:
    """The statement of an OpenMP construct, from its first token `start` to its last `end`
    (line, column); `name` as written ('omp single'); `reason` why the team does not run it
    together, None for a `parallel` region (a new team, which a sync inside it waits for)."""
    name: str
    line: int
    reason: str | None
    start: tuple[int, int]
    end: tuple[int, int]

    def holds(self, line: int, column: int) -> bool:
        """Whether the place (line, column) lies in the construct's statement."""
        return self.start <= (line, column) <= self.end


def partial_constructs(stream: list[CodeToken | Directive]) -> list[Partial]:
    """Each `#pragma omp` construct of the lexed file whose statement not every thread of the
    team runs together, and each `parallel` region (reason None), outermost first."""
    code = [item for item in stream if isinstance(item, CodeToken)]
    found, seen = [], 0
    for item in stream:
        if isinstance(item, CodeToken):
            seen += 1
            continue
        words = _construct(item) if item.namespace == "omp" and seen < len(code) else []
        reason = next((_REASONS[w] for w in words if w in _REASONS), None)
        if reason or "parallel" in words:
            first, last = code[seen], statement_end(code, seen)
            found.append(Partial(f"omp {' '.join(words)}", item.line, reason,
                                 (first.line, first.column), (last.line, last.column)))
    return found


def _construct(directive: Directive) -> list[str]:
    """The name words of an OpenMP directive (`parallel for` of `parallel for private(i)`)."""
    words = []
    for word in re.findall(r"[A-Za-z_]\w*|\S", directive.body):
        if word not in _CONSTRUCT_WORDS:
            break
        words.append(word)
    return words
