"""Inverse problems on ground-test data: resonance (Abel inversion), static hysteresis loops,
hydraulic test rig. Takes arrays in SI units; opens no files."""
__all__: list[str] = []
