"""call: the `#pragma cll` compiler. Finds and checks the pragmas of a C file, writes the
instrumented `.cll.c`/`.cll.h`, builds them against the tracing runtime and runs sweeps."""
