"""Reconstruction problem: a forward model, telemetry, a parameter space and an observation
model give residuals and a log-probability.

:class:`ReconstructionProblem` couples a forward model, telemetry, the parameter space and an
observation model. The forward model is any callable ``forward(params, names, *, t_end=None)
-> Simulated`` taking a batch ``params`` of shape ``(n, len(names))`` (SI, in the order of
``names``, which are the parameters the observation model does not consume) and returning the
simulated channels of every row (:class:`recon.observation.Simulated`); ``t_end`` (n,) [s] is
how far each row must be simulated (rows may stop there, NaN after). The docking batch kernel
plugs in there; tests use analytic models.

The problem compares the model with the telemetry of its fitted span only
(:mod:`recon.span`): :attr:`ReconstructionProblem.record` is the whole record,
:attr:`ReconstructionProblem.telemetry` the samples inside the span.

The parameter space and its ``[parameters]`` table: :mod:`identification.space`; the engine
protocol every problem follows: :class:`identification.problem.GaussianProblem`.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from identification.problem import GaussianProblem
from identification.space import ParameterSpace
from recon.observation import BoundObservation, ObservationModel, Simulated
from recon.telemetry import Telemetry

__all__ = ["INITIAL_CONDITIONS", "PARAMETER_UNITS", "parameter_space", "ReconstructionProblem"]

#: The twelve initial-condition names of the forward model (relative state of the active unit
#: frame in the passive unit frame at first contact) and their SI units.
INITIAL_CONDITIONS: dict[str, str] = {
    **{f"rel_pos_{a}": "m" for a in "xyz"},
    **{f"rel_vel_{a}": "m/s" for a in "xyz"},
    "rel_roll": "rad", "rel_pitch": "rad", "rel_yaw": "rad",
    **{f"rel_rate_{a}": "rad/s" for a in "xyz"},
}

#: SI unit of parameter names known in advance (others take pint's base unit of their ``unit``).
PARAMETER_UNITS: dict[str, str] = {**INITIAL_CONDITIONS, "clock_offset": "s"}


def parameter_space(table, **kwargs) -> ParameterSpace:
    """A reconstruction's parameter space from its ``[parameters]`` table
    (:meth:`identification.space.ParameterSpace.from_dict`, whose other keyword arguments
    ``kwargs`` takes), with the SI units of :data:`PARAMETER_UNITS` and of every registered
    docking unit's parameters (:func:`models.unit.all_parameters`) known in advance."""
    from models.unit import all_parameters

    return ParameterSpace.from_dict(table, si_units={**all_parameters(), **PARAMETER_UNITS},
                                    **kwargs)


class ReconstructionProblem(GaussianProblem):
    """Residuals and log-probability of parameters given telemetry.

    Parameters
    ----------
    forward
        ``forward(params, names) -> Simulated``: batch ``(n, len(names))`` [SI] to simulated
        channels (see the module docstring).
    telemetry
        Flight telemetry (SI).
    parameter_space
        Named parameters; names the observation model understands (``clock_offset``,
        ``<channel>_bias`` ...) go to it, the rest to ``forward``.
    observation_model
        Sensor models of the fitted channels.
    span
        The fitted span (:class:`recon.span.FitSpan`); default: the whole record
        (:func:`recon.span.choose_span` with its defaults).
    clock_events
        ``(telemetry flag, event column)`` pairs, in order of preference: the flag's first
        rising edge in the telemetry marks the event whose simulated time is column ``event
        column`` of the forward model's ``last_events`` (:meth:`profile_clock`).
    """

    def __init__(self, forward: Callable[..., Any], telemetry: Telemetry,
                 parameter_space: ParameterSpace, observation_model: ObservationModel, *,
                 span=None, clock_events: Sequence[tuple[str, int]] = ()) -> None:
        from recon.span import choose_span

        self.forward = forward
        self.record = telemetry
        self.space = parameter_space
        self.observation = observation_model
        self.span = span if span is not None else choose_span(telemetry, parameter_space,
                                                              observation_model)
        self.telemetry = telemetry.window(self.span.start, self.span.stop)
        self.bound: BoundObservation = observation_model.bind(self.telemetry)
        obs_names = observation_model.parameter_names()
        self._obs_idx = {n: i for i, n in enumerate(parameter_space.names) if n in obs_names}
        self.forward_names = tuple(n for n in parameter_space.names if n not in obs_names)
        self._fwd_idx = np.array([parameter_space.names.index(n) for n in self.forward_names], int)
        self._log_norm = self.bound.log_norm()
        defaults = observation_model.defaults()
        self._clock = (self._obs_idx.get("clock_offset"), defaults["clock_offset"])
        self._latency = [(self._obs_idx.get(f"{c}_latency"), defaults[f"{c}_latency"])
                         for c in observation_model.names]
        self.clock_events = tuple(clock_events)
        self.n_evaluations = 0

    def fingerprint(self) -> dict[str, str]:
        """SHA-256 digests (16 hex digits each) of what the posterior depends on besides the
        forward model: ``record`` (the fitted span's samples: times and values of every
        channel), ``parameters`` (names, units, fixed values, priors and bounds),
        ``observation`` (the sensor models: noise, quantization, biases, latencies, clock)
        and ``span``. Stored with the MCMC chains so that a resume with another record,
        prior or noise setting is refused (:mod:`identification.engines.mcmc`); a change of
        the forward model shows in the log probability at the chains' last positions."""
        import dataclasses
        import hashlib
        import json

        def h(*parts) -> str:
            d = hashlib.sha256()
            for part in parts:
                if isinstance(part, np.ndarray):
                    d.update(np.ascontiguousarray(part, dtype=float).tobytes())
                else:
                    d.update(json.dumps(part, sort_keys=True, default=str).encode())
            return d.hexdigest()[:16]

        tel = self.telemetry
        record = [tel.t]
        for name in sorted(tel.channels):
            record += [name, np.asarray(tel.channels[name], dtype=float)]
        params = [{"name": p.name, "unit": p.unit, "fixed": p.fixed, "value": p.value,
                   "prior": None if p.prior is None else p.prior.to_dict()}
                  for p in self.space.parameters]
        obs = dataclasses.asdict(self.observation) if dataclasses.is_dataclass(
            self.observation) else repr(self.observation)
        return {"record": h(*record), "parameters": h(params), "observation": h(obs),
                "span": h(self.span.to_dict())}

    def likelihood_groups(self) -> dict[str, tuple[slice, float]]:
        """One part per fitted telemetry channel: its columns of the residual vector and its
        share of the normalizing constant
        (:meth:`recon.observation.BoundObservation.log_norm_by_channel`)."""
        norms = self.bound.log_norm_by_channel()
        return {c: (cols, norms[c]) for c, cols in self.bound.channel_slices().items()}

    def _column(self, full: np.ndarray, index: int | None, default: float) -> np.ndarray:
        return full[:, index] if index is not None else np.full(full.shape[0], default)

    def sim_end(self, full: np.ndarray) -> np.ndarray:
        """How far [s] each row of a full parameter batch must be simulated to reach the end
        of the fitted span on its own clock (:meth:`recon.span.FitSpan.sim_end`)."""
        clock = self._column(full, *self._clock)
        lat = np.min(np.column_stack([self._column(full, *c) for c in self._latency]), axis=1)
        return self.span.sim_end(clock, lat)

    @property
    def n_residuals(self) -> int:
        return self.bound.n_residuals

    def simulate(self, theta: np.ndarray, *, any_clock: bool = False
                 ) -> tuple[Simulated, dict[str, np.ndarray]]:
        """Run the forward model on a free-parameter batch; also return the observation
        parameters of each row.

        Each row is simulated as far as its own clock needs (:meth:`sim_end`); with
        ``any_clock`` as far as any clock inside the bounds needs (:attr:`FitSpan.duration`),
        for a caller that changes the clock offset afterwards (a profiled clock).
        """
        full = self.space.full(theta)
        self.n_evaluations += full.shape[0]
        t_end = (np.full(full.shape[0], self.span.duration) if any_clock
                 else self.sim_end(full))
        sim = Simulated.coerce(self.forward(full[:, self._fwd_idx], self.forward_names,
                                            t_end=t_end))
        obs = {n: full[:, i] for n, i in self._obs_idx.items()}
        return sim, obs

    def residuals(self, theta: np.ndarray) -> np.ndarray:
        """Whitened data residuals; ``(n, m)`` for a batch, ``(m,)`` for one vector.
        NaN where the forward model failed."""
        theta = np.asarray(theta, float)
        single = theta.ndim == 1
        sim, obs = self.simulate(np.atleast_2d(theta))
        r = self.bound.residuals(sim, obs)
        return r[0] if single else r

    def residuals_with(self, forward, extra: np.ndarray, theta: np.ndarray) -> np.ndarray:
        """Whitened data residuals ``(n, m)`` of the free-parameter vector ``theta`` with
        forward-model parameters beyond this problem's: ``forward`` is this problem's forward
        model over :attr:`forward_names` followed by more names
        (:meth:`recon.forward.UnitForward.with_names`), ``extra`` ``(n, k)`` their values
        per row. Each row is simulated as far as ``theta``'s clock needs."""
        full = self.space.full(np.atleast_2d(np.asarray(theta, float)))
        extra = np.atleast_2d(np.asarray(extra, float))
        n = extra.shape[0]
        self.n_evaluations += n
        rows = np.hstack([np.repeat(full[:, self._fwd_idx], n, axis=0), extra])
        sim = Simulated.coerce(forward(rows, forward.names,
                                       t_end=np.repeat(self.sim_end(full), n)))
        obs = {k: np.repeat(full[:, i], n) for k, i in self._obs_idx.items()}
        return self.bound.residuals(sim, obs)

    def predict(self, theta: np.ndarray) -> dict[str, np.ndarray]:
        """Noise-free predicted telemetry per channel, ``{name: (n, m_channel)}``."""
        sim, obs = self.simulate(np.atleast_2d(np.asarray(theta, float)))
        return self.bound.predict(sim, obs)

    def profile_clock(self, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Cost ``0.5 (sum r^2 + sum prior_r^2)`` of a batch with the clock offset *profiled*.

        For each row the forward model runs once (as far as any allowed clock needs); the
        clock offset (if free) is then set so that the simulated time of the first
        :attr:`clock_events` event the row has (capture, say) coincides with the first rising
        edge of its telemetry flag, clipped to its bounds, and the residuals are evaluated
        with it. Aligning on an event removes the one parameter whose mismatch makes every
        other residual meaningless (a capture 0.3 s early misplaces the whole stroke
        history), so a screen over the other parameters ranks draws by their shape, not their
        timing.

        Returns
        -------
        cost : ndarray (n,)
            ``inf`` where the forward model failed.
        theta : ndarray (n, ndim)
            The batch with the profiled clock offsets.
        """
        from recon.span import first_edge

        x = np.array(np.atleast_2d(theta), float, copy=True)
        sp = self.space
        sim, obs = self.simulate(x, any_clock=True)
        ev = getattr(self.forward, "last_events", None)
        if "clock_offset" in self.names and ev is not None:
            k = self.names.index("clock_offset")
            clock = np.full(x.shape[0], np.nan)
            for flag, col in self.clock_events:
                t_tel = first_edge(self.telemetry, flag)
                if not np.isfinite(t_tel):
                    continue
                fill = ~np.isfinite(clock) & np.isfinite(ev[:, col])
                clock[fill] = t_tel - ev[fill, col]
            ok = np.isfinite(clock)
            x[ok, k] = np.clip(clock[ok], sp.lower[k], sp.upper[k])
            obs = dict(obs)
            obs["clock_offset"] = sp.full(x)[:, sp.names.index("clock_offset")]
        r = self.bound.residuals(sim, obs)
        pr = np.array([sp.prior_residuals(row) for row in x])
        cost = 0.5 * (np.sum(r * r, axis=1) + np.sum(pr * pr, axis=1))
        return np.where(np.isfinite(cost), cost, np.inf), x
