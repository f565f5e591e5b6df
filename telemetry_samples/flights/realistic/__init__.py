"""Realistic-span records of the shipped flights (``telemetry_samples.flights.generate``)."""
