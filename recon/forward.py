"""A docking unit's batch kernel as the forward model of a reconstruction problem.

:class:`UnitForward` is ``forward(params, names, t_end=None) -> Simulated``
(:mod:`recon.problem`) over the unit's batch runner (:meth:`models.unit.DockingUnit.batch`),
and gives the histories the reconstruction reports (loads, energy, trajectory) from the same
runner with other channels.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from models.errors import InputError
from models.unit import DockingUnit
from recon.observation import Simulated
from recon.trajectory import Histories

__all__ = ["UnitForward"]


class UnitForward:
    """``forward(params, names, t_end=None) -> Simulated`` over a unit's batch runner.

    Parameters
    ----------
    unit, scenario
        The docking unit and its scenario.
    names
        Forward-model parameters, the columns of ``params``.
    channels
        Channels to simulate.
    duration
        The longest simulation a row may need [s].
    rate
        Output rate [Hz] (default: the scenario's).
    t_pre
        Free-flight extension before the start plane [s] (:mod:`recon.span`).

    Each call simulates row ``i`` up to ``t_end[i]`` [s]. Rows whose simulation fails
    (penetration exceeded, ...) come back as NaN, which the problem turns into zero
    probability; :attr:`last_events` holds the event times of the last call. The unit's
    :attr:`~models.unit.DockingUnit.flag_events` among ``channels`` come with their first
    rising edge as the kernel timed it (:attr:`recon.observation.Simulated.first_rise`).
    """

    def __init__(self, unit: DockingUnit, scenario, names: Sequence[str],
                 channels: Sequence[str], *, duration: float | None = None,
                 rate: float | None = None, t_pre: float = 0.0) -> None:
        for n in names:
            if n not in unit.parameters:
                raise InputError(f"not a parameter of the {unit.title} (known: "
                                 f"{', '.join(unit.parameters)})", key=n)
        self.unit = unit
        self.names = tuple(names)
        self.channels = tuple(channels)
        self._made = (scenario, {"duration": duration, "rate": rate, "t_pre": t_pre})
        self.runner = unit.batch(scenario, self.names, self.channels, rate=rate,
                                 duration=duration, t_pre=t_pre)
        self.t = self.runner.t
        self.last_events: np.ndarray | None = None
        # the flags whose first rising edge the kernel times (DockingUnit.flag_events)
        self._first_rise = tuple((f, unit.events.index(e)) for f, e in unit.flag_events
                                 if f in self.channels)

    def __call__(self, params: np.ndarray, names: Sequence[str], *,
                 t_end: np.ndarray | None = None) -> Simulated:
        if tuple(names) != self.names:
            raise InputError(f"forward model built for {self.names}, called with {tuple(names)}")
        out, ev, status = self.runner.evaluate(np.atleast_2d(params), t_end)
        out[status != 0] = np.nan
        self.last_events = ev
        return Simulated(self.t, {c: out[:, :, i] for i, c in enumerate(self.channels)},
                         {f: ev[:, k] for f, k in self._first_rise})

    def with_names(self, names: Sequence[str]) -> "UnitForward":
        """The same scenario, channels, span and rate over other parameter ``names`` (the
        scenario's values of those not set by a row)."""
        scenario, kw = self._made
        return UnitForward(self.unit, scenario, names, self.channels, **kw)

    @property
    def base(self) -> dict[str, float]:
        """The scenario's value of each of :attr:`names` [SI]."""
        return dict(zip(self.names, (float(v) for v in self.runner.base)))

    def histories(self, channels: Sequence[str]):
        """``run(full, all_names, t_end) -> Histories``: the histories of ``channels`` of a
        full parameter batch (the columns of this model's parameters picked from it), from
        the start plane (no free-flight extension) to each row's ``t_end`` [s]."""
        runner = self.runner.derive(tuple(channels), t_pre=0.0)
        unit = self.unit
        names = self.names

        def run(full: np.ndarray, all_names: Sequence[str], t_end: np.ndarray) -> Histories:
            idx = [list(all_names).index(n) for n in names]
            out, ev, status = runner.evaluate(np.atleast_2d(full)[:, idx], t_end)
            out[status != 0] = np.nan
            ev[status != 0] = np.nan
            ch = {c: out[:, :, i] for i, c in enumerate(runner.channels)}
            return Histories(np.asarray(runner.t, float), ch,
                             {c: unit.channels[c].file_unit for c in runner.channels}, ev,
                             tuple(unit.events), status)

        return run
