"""Figures and HTML / PDF reports. Reads results; computes nothing new."""
__all__: list[str] = []
