"""Shipped example configurations (data)."""
