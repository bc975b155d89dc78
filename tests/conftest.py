"""Shared pytest configuration: a bounded budget for the property-based (hypothesis) fuzzers.

Each fuzzer draws at most `max_examples` inputs and has no per-example deadline (the machines
are shared and noisy); `HYPOTHESIS_PROFILE=long` runs a larger campaign by hand (5,000 inputs
per fuzzer, or `HYPOTHESIS_EXAMPLES`; fuzzers with their own smaller budget keep it).
"""
import os

from hypothesis import HealthCheck, settings

settings.register_profile("suite", max_examples=150, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("long", max_examples=int(os.environ.get("HYPOTHESIS_EXAMPLES", 5000)), deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "suite"))
