"""The peripheral (androgynous ring) unit's own numba kernels; the ones every unit shares are in
:mod:`models._kernels` (its conventions and cache guard hold here too)."""
from models._kernels import guard_numba_cache

__all__: list[str] = []


def _anchor() -> None:
    """A function of this package: where numba caches its kernels."""


guard_numba_cache(_anchor)
