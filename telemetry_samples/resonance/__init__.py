"""Synthetic resonance-test records with their truth (see generate.py)."""
