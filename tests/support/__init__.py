"""Helpers shared by the test layers: event factories, an HTTP-ish client over a handler, call counters."""
