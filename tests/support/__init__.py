"""Helpers shared by the tests (no tests here): `fit` (synthetic experiments), `traces` (trace
files for the llac tests), `parallel` (MPI and OpenMP traces), `runtime` (build and run C
programs against the runtime). Imported as `support.<module>`: pytest puts tests/ on the path."""
