"""The unit-independent part of a docking unit's batch runner
(:class:`models.unit.BatchRunner`): packed parameter rows overridden by name, per-row end
times, the output grid and the choice of channels.

A unit's runner subclasses :class:`KernelBatch` and supplies the kernel call
(:meth:`KernelBatch._run`) and, where packed entries are derived from others (a slip
deflection from a slip force), :meth:`KernelBatch._complete`. The numerics of a row are
exactly those of the unit's single-run kernel on the same packed row: the base row is copied,
the chosen entries replaced, and the end time set to the first output sample at or after the
requested one.
"""
from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence

import numpy as np

from models.errors import InputError

__all__ = ["KernelBatch"]


class KernelBatch:
    """Many parameter vectors of one packed scenario through a unit's batch kernel.

    Parameters
    ----------
    P
        Base packed parameter row (float64), not modified.
    n_out
        Output samples from ``t = 0`` to the scenario's end time.
    known_parameters
        Name -> packed index of every parameter a row may override.
    parameters
        The chosen names (columns of ``theta``).
    known_channels
        Every kernel output channel in its packed order.
    channels
        The chosen channels.
    i_dt_out, i_t_end
        Packed indices of the output interval [s] and the end time [s].
    n_events, n_info
        Sizes of the kernel's event and run-information rows.
    n_pre
        Output samples before ``t = 0`` (free-flight extension; 0 when the unit has none).
    """

    def __init__(self, P: np.ndarray, n_out: int, known_parameters: Mapping[str, int],
                 parameters: Sequence[str], known_channels: Sequence[str],
                 channels: Sequence[str], *, i_dt_out: int, i_t_end: int, n_events: int,
                 n_info: int, n_pre: int = 0) -> None:
        first: dict[int, str] = {}
        for p in parameters:
            if p not in known_parameters:
                raise InputError(f"unknown parameter (known: {', '.join(known_parameters)})",
                                 key=p)
            i = known_parameters[p]
            if i in first:
                # two names of one packed entry (a short name and its scenario path): the
                # later column would silently override the earlier
                raise InputError(f"the same number as {first[i]}: free one of the two", key=p)
            first[i] = p
        self.P = P
        self.n_out = int(n_out)
        self.known_parameters = dict(known_parameters)
        self.parameters = tuple(parameters)
        self.index = np.array([known_parameters[p] for p in parameters], dtype=np.int64)
        self.known_channels = tuple(known_channels)
        self.i_dt_out = int(i_dt_out)
        self.i_t_end = int(i_t_end)
        self.n_events = int(n_events)
        self.n_info = int(n_info)
        self.n_pre = int(n_pre)
        self._set_channels(channels)

    def _set_channels(self, channels: Sequence[str]) -> None:
        for c in channels:
            if c not in self.known_channels:
                raise InputError("unknown channel", key=c)
        self.channels = tuple(channels)
        self.chan = np.array([self.known_channels.index(c) for c in channels], dtype=np.int64)
        self.t = (np.arange(self.n_pre + self.n_out) - self.n_pre) * self.P[self.i_dt_out]

    # -- what a unit supplies ------------------------------------------------------------------
    def _run(self, Pb: np.ndarray, out: np.ndarray, ev: np.ndarray, info: np.ndarray,
             status: np.ndarray) -> None:
        """Run the kernel's batch entry point on the rows ``Pb`` (writes the other arrays)."""
        raise NotImplementedError

    def _complete(self, Pb: np.ndarray) -> None:
        """Recompute packed entries derived from overridden ones (in place); none here."""

    # -- the runner interface ------------------------------------------------------------------
    @property
    def duration(self) -> float:
        """The longest simulated time a row may have [s]."""
        return float(self.P[self.i_t_end])

    @property
    def base(self) -> np.ndarray:
        """Base values of the chosen parameters (SI)."""
        return self.P[self.index].copy()

    def status_text(self, status: int) -> str:
        """What a kernel status code means (:mod:`models._kernels.status`, every unit's)."""
        from models._kernels.status import STATUS_TEXT

        return "ok" if status == 0 else STATUS_TEXT.get(int(status), f"status {status}")

    def derive(self, channels: Sequence[str] | None = None, *, t_pre: float | None = None
               ) -> "KernelBatch":
        """The same scenario, parameters, rate and duration with other output ``channels``
        (shares the packed tables). A unit with a free-flight extension overrides this for
        ``t_pre``; here only ``t_pre`` of None or 0 with no extension is accepted."""
        if t_pre is not None and not (t_pre == 0.0 and self.n_pre == 0):
            raise InputError("this unit's kernel has no free flight before t = 0", key="t_pre")
        other = copy.copy(self)
        if channels is not None:
            other._set_channels(channels)
        return other

    def rows(self, theta: np.ndarray, t_end: np.ndarray | None = None) -> np.ndarray:
        """The packed rows of ``theta`` (n, k) with per-row end times ``t_end`` (n,) [s]:
        the first output sample at or after ``t_end``, at most :attr:`duration`, NaN: the
        whole duration."""
        theta = np.atleast_2d(np.asarray(theta, dtype=float))
        if theta.shape[1] != len(self.index):
            raise InputError(f"theta has {theta.shape[1]} columns, expected "
                             f"{len(self.index)} ({', '.join(self.parameters)})")
        n = theta.shape[0]
        Pb = np.repeat(self.P[None, :], n, axis=0)
        Pb[:, self.index] = theta
        self._complete(Pb)
        if t_end is not None:
            t_end = np.broadcast_to(np.asarray(t_end, float), (n,))
            dt = self.P[self.i_dt_out]
            # the first output sample at or after t_end (the kernels record while k dt <= end)
            k_end = np.ceil(np.where(np.isfinite(t_end), t_end, np.inf) / dt - 1e-9)
            Pb[:, self.i_t_end] = np.minimum(np.maximum(k_end, 0.0) * dt, self.P[self.i_t_end])
        return Pb

    def evaluate(self, theta: np.ndarray, t_end: np.ndarray | None = None
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Run every row of ``theta`` (n, k), each to its ``t_end`` (:meth:`rows`).

        Returns
        -------
        out : ndarray (n, n_t, n_channels)
            Chosen channels at :attr:`t`; NaN after a failure and after the row's end.
        events : ndarray (n, n_events)
            Event times [s] in the unit's event order, NaN when absent.
        status : ndarray of int (n,)
            0 = ok; otherwise the kernel status.
        """
        Pb = self.rows(theta, t_end)
        n = Pb.shape[0]
        out = np.empty((n, self.n_pre + self.n_out, len(self.chan)))
        ev = np.empty((n, self.n_events))
        info = np.zeros((n, self.n_info))
        status = np.zeros(n, dtype=np.int64)
        self._run(Pb, out, ev, info, status)
        return out, ev, status
