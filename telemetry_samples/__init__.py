"""Shipped synthetic samples (flights, static tests, resonance tests, rig records), each with
its truth beside it. :func:`sample_path` locates a file in the installed package."""
from __future__ import annotations

from pathlib import Path

__all__ = ["sample_path", "SAMPLES_DIR"]

SAMPLES_DIR = Path(__file__).resolve().parent


def sample_path(*parts: str) -> Path:
    """Path of a shipped sample, e.g. ``sample_path("static", "lateral_double_loop.csv")``."""
    path = SAMPLES_DIR.joinpath(*parts)
    if not path.exists():
        raise FileNotFoundError(f"no shipped sample {'/'.join(parts)}")
    return path
