"""Forward physics of docking: hysteresis elements, contact, rigid bodies, docking units.

Nothing here opens a file, fits or plots. Hot loops live in :mod:`models._kernels` as numba
kernels on flat float64 / int64 arrays in SI units; the modules beside them carry names, units
and validation and build those arrays once.
"""
__all__ = ["__version__"]

#: the version of the dockrecon distribution (pyproject.toml reads it from here)
__version__ = "0.1.0"
