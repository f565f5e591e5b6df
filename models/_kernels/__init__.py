"""numba kernels: flat float64 / int64 arrays, SI units, no objects, no I/O, no logging.

Conventions (see docs/CONVENTIONS.md):

* every kernel is ``@njit(**NJIT)`` (``cache=True`` so the compile is paid once per machine);
* discrete state (branch numbers, latch flags) is int64 arrays mutated in place, continuous state
  float64 arrays;
* errors inside kernels are returned as integer status codes and turned into typed exceptions by
  the readable wrapper (numba cannot raise exceptions that carry data).
"""
NJIT = {"cache": True, "nogil": True, "error_model": "numpy"}

__all__ = ["NJIT"]
