"""Helpers shared by the test layers: call counters, injected faults, fixtures and checks. The drivers of
the functions and the builders of requests and items the benchmarks use too live in ``local.harness``."""
