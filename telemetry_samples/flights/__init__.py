"""Synthetic probe-cone flights with their truth (see generate.py)."""
