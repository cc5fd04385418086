"""binder-py benchmarks: ``binder-py bench`` (see docs/BENCHMARKS.md)."""
