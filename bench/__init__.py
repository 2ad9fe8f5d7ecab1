"""Benchmarks: ``make bench`` (``python -m bench``) measures and writes docs/benchmarks.md.

What is measured, never asserted: cold-start imports per function, each function's first request
against its warm ones (primed at init and not, with the AWS calls each makes),
DynamoDB round trips and consumed capacity per commerce endpoint, and order throughput against
DynamoDB Local. Tests prove behaviour; these numbers are for reading and for comparing commits.
"""
