"""Synthetic peripheral (androgynous ring) flights with their truth (see generate.py)."""
