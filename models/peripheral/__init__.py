"""Peripheral (androgynous ring) docking unit: a docking ring on six legs with three guide
petals, latches with mass and capture sensors (contact-paper digest section 9).

Modules by job:

* :mod:`models.peripheral.geometry` -- ring, petal, stop and sensor geometry (both rings);
* :mod:`models.peripheral.mechanism` -- the six-leg parallel mechanism carrying the ring;
* :mod:`models.peripheral.latches` -- latches with mass, stops and capture sensors.

The numba kernels they pack arrays for live in :mod:`models._kernels` (``peripheral_*``).
"""
