"""Reconstruction problem: parameter space with priors, residuals and log-probability.

The parameter space is read from a ``[parameters]`` table of the scenario or of a run TOML::

    [parameters.rel_vel_x]            # closing velocity
    prior = "uniform"                 # uniform | normal | lognormal
    lower = 0.05
    upper = 0.40
    unit = "m/s"                      # unit of the numbers in this table (default: SI)

    [parameters.rel_pos_y]
    prior = "normal"
    mean = 0.0
    sd = 50.0
    unit = "mm"                       # bounds default to mean +- 6 sd

    [parameters.brake_slip_force]
    prior = "lognormal"
    median = 900.0                    # exp(mu)
    sigma = 0.2                       # sd of ln(x) [-]
    unit = "N"

    [parameters.rel_roll]
    fixed = 0.0                       # not fitted

    [parameters.clock_offset]         # telemetry time = simulation time + clock_offset
    anchor = "contact"                # numbers count from the record's first contact edge:
    lower = -8.0                      #   first contact 0.5 ... 8 s after the start plane
    upper = -0.5
    unit = "s"

``step`` (optional, in ``unit``) is the parameter's finite-difference step in the optimizer's
and the Laplace Jacobian; default ``[optimizer] jac_step`` times the prior's spread, which is
too coarse for a parameter whose prior is far wider than anything the data allow (an anchored
clock offset spread over seconds and pinned to a millisecond).

``anchor`` (the clock offset only) names a telemetry flag; ``lower``, ``upper``, ``mean``,
``start`` and ``fixed`` then count from the time of its first rising edge in the record, so one
run configuration serves records whose clocks have nothing to do with the start plane (the
prior is resolved when the record is read; ``result.json`` states the edge time).

Priors are truncated to ``[lower, upper]``; normal and log-normal priors without bounds are
truncated at 6 standard deviations (of x, or of ln x), where the lost mass (2e-9) is far below
anything a sampler can resolve.

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

:class:`ResidualProblem` is the same engine protocol for a fit given by a residual function
(the ground-test identifications of :mod:`identification`, fitted by :mod:`recon.identify`):
model minus data of a batch of parameter vectors, divided by each residual's noise level.
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from scipy import special

from models.errors import InputError
from recon.io import to_si
from recon.observation import BoundObservation, ObservationModel, Simulated
from recon.telemetry import Telemetry

__all__ = [
    "INITIAL_CONDITIONS",
    "PARAMETER_UNITS",
    "Prior",
    "GaussianProblem",
    "Parameter",
    "ParameterSpace",
    "ReconstructionProblem",
    "ResidualProblem",
]

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

#: SI names preferred over pint's base-unit products, in this order.
_PREFERRED_SI = ("m", "s", "kg", "m/s", "rad/s", "N", "N*m", "N/m", "N*s/m", "N*m/rad",
                 "N*m*s/rad", "J", "W", "Pa", "kg*m**2")

_TRUNC = 6.0  # default truncation of normal / log-normal priors [standard deviations]


def _ndtri(p):
    return special.ndtri(p)


def _ndtr(x):
    return special.ndtr(x)


@dataclasses.dataclass(frozen=True)
class Prior:
    """Prior of one parameter, truncated to ``[lower, upper]`` (SI).

    ``kind`` is ``"uniform"`` (``a``, ``b`` unused), ``"normal"`` (``a`` = mean, ``b`` = sd) or
    ``"lognormal"`` (``a`` = median, ``b`` = sd of ln x).
    """

    kind: str
    lower: float
    upper: float
    a: float = math.nan
    b: float = math.nan
    anchor: str | None = None     # telemetry flag the numbers were given from (module docstring)
    anchor_t: float = math.nan    # its first rising edge [s], already added to lower/upper/a

    def __post_init__(self) -> None:
        if self.kind not in ("uniform", "normal", "lognormal"):
            raise InputError(f"unknown prior '{self.kind}' (uniform, normal, lognormal)")
        if not (np.isfinite(self.lower) and np.isfinite(self.upper) and self.lower < self.upper):
            raise InputError(f"need finite lower < upper, got [{self.lower}, {self.upper}]")
        if self.kind != "uniform" and not (np.isfinite(self.a) and self.b > 0):
            raise InputError("normal / lognormal prior needs a location and a spread > 0")
        if self.kind == "lognormal" and (self.lower <= 0 or self.a <= 0):
            raise InputError("lognormal prior needs median > 0 and lower > 0")

    # standardized variable z and its bounds
    def _z(self, x):
        if self.kind == "normal":
            return (x - self.a) / self.b
        return (np.log(np.maximum(x, 1e-300)) - math.log(self.a)) / self.b

    def _x(self, z):
        if self.kind == "normal":
            return self.a + self.b * z
        return self.a * np.exp(self.b * z)

    def logpdf(self, x: np.ndarray) -> np.ndarray:
        """Unnormalized log density; ``-inf`` outside the bounds."""
        x = np.asarray(x, float)
        inside = (x >= self.lower) & (x <= self.upper)
        if self.kind == "uniform":
            out = np.zeros_like(x)
        elif self.kind == "normal":
            out = -0.5 * self._z(x) ** 2
        else:
            out = -0.5 * self._z(x) ** 2 - np.log(np.maximum(x, 1e-300))
        return np.where(inside, out, -np.inf)

    def ppf(self, u: np.ndarray) -> np.ndarray:
        """Quantile function of the truncated prior, ``u`` in [0, 1]."""
        u = np.asarray(u, float)
        if self.kind == "uniform":
            return self.lower + u * (self.upper - self.lower)
        cl, cu = _ndtr(self._z(self.lower)), _ndtr(self._z(self.upper))
        return np.clip(self._x(_ndtri(cl + u * (cu - cl))), self.lower, self.upper)

    def residual(self, x: np.ndarray) -> np.ndarray | None:
        """Residual whose square is -2 log prior (up to a constant) for least squares:
        z for normal, z of ln x for log-normal (MAP in ln x); None for uniform."""
        if self.kind == "uniform":
            return None
        return self._z(np.asarray(x, float))

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"kind": self.kind}
        if self.kind == "normal":
            d.update(mean=self.a, sd=self.b)
        elif self.kind == "lognormal":
            d.update(median=self.a, sigma=self.b)
        d.update(lower=self.lower, upper=self.upper)
        if self.anchor is not None:
            d["anchor"] = {"flag": self.anchor, "t": self.anchor_t}
        return d


@dataclasses.dataclass(frozen=True)
class Parameter:
    """One named parameter: fixed (``prior`` None) or free with a prior.

    ``value`` is the fixed value, or the nominal value of a free one (a start point) [SI].
    """

    name: str
    unit: str
    value: float
    prior: Prior | None = None
    step: float | None = None   # finite-difference step [SI] (module docstring)

    @property
    def fixed(self) -> bool:
        return self.prior is None


_KEYS = {"prior", "lower", "upper", "mean", "sd", "median", "sigma", "fixed", "unit", "start",
         "anchor", "step"}


def _unit_factor(name: str, unit: str | None, key: str) -> tuple[float, str]:
    """Multiplicative factor from ``unit`` to SI, and the SI unit string."""
    si = PARAMETER_UNITS.get(name)
    if si is None and name.endswith(("_latency",)):
        si = "s"
    if unit is None:
        return 1.0, si if si is not None else ""
    if si is None:  # a name not known in advance: SI is pint's base unit of the given unit
        from recon.io import _registry

        ureg = _registry()
        try:
            dim = ureg(unit).dimensionality
        except Exception:
            raise InputError(f"unknown unit '{unit}'", key=key) from None
        if not dim:  # pint's angles are dimensionless: keep rad for angle units only
            angle = any(a in unit for a in ("rad", "deg", "arc", "rev", "turn"))
            si = "rad" if angle else ""
        else:
            si = next((u for u in _PREFERRED_SI if ureg(u).dimensionality == dim),
                      f"{ureg(unit).to_base_units().units:~}")
    f = to_si(1.0, unit, si, key=key)
    zero = to_si(0.0, unit, si, key=key)
    if zero != 0.0:
        raise InputError(f"unit '{unit}' has an offset; give the value in an absolute unit", key=key)
    return float(f), si


class ParameterSpace:
    """Ordered named parameters; the free ones form the vector the engines see.

    All arrays are SI. Batches are ``(n, n_free)``.
    """

    def __init__(self, parameters: Sequence[Parameter]) -> None:
        names = [p.name for p in parameters]
        if len(set(names)) != len(names):
            raise InputError("a parameter appears twice", key="parameters")
        self.parameters = tuple(parameters)
        self.names = tuple(names)
        self.free = tuple(p for p in self.parameters if not p.fixed)
        self.free_names = tuple(p.name for p in self.free)
        self.free_index = np.array([i for i, p in enumerate(self.parameters) if not p.fixed], int)
        self.lower = np.array([p.prior.lower for p in self.free], float)
        self.upper = np.array([p.prior.upper for p in self.free], float)
        self._template = np.array([p.value for p in self.parameters], float)
        if not self.free:
            raise InputError("no free parameter to fit", key="parameters")

    @property
    def ndim(self) -> int:
        return len(self.free)

    def __getitem__(self, name: str) -> Parameter:
        return self.parameters[self.names.index(name)]

    @classmethod
    def from_dict(cls, table: Mapping[str, Any], *, key: str = "parameters",
                  anchors: Mapping[str, float] | None = None,
                  source: str | None = None) -> "ParameterSpace":
        """From the ``[parameters]`` TOML table (see the module docstring).

        ``anchors`` maps telemetry flags to the time [s] of their first rising edge in the
        record (NaN: no edge); a table with ``anchor`` is shifted by it. Without ``anchors``
        (no record yet: checking a configuration, drawing from the priors) an anchored table
        keeps its numbers as offsets from the edge. ``source`` names the record in errors.
        """
        if not isinstance(table, Mapping) or not table:
            raise InputError("expected a table of parameters", key=key)
        out = []
        for name, spec in table.items():
            k = f"{key}.{name}"
            if not isinstance(spec, Mapping):
                raise InputError("expected a table (prior, bounds, unit) or {fixed = value}", key=k)
            for sub in spec:
                if sub not in _KEYS:
                    raise InputError(f"unknown key (allowed: {', '.join(sorted(_KEYS))})",
                                     key=f"{k}.{sub}")
            f, si = _unit_factor(name, spec.get("unit"), f"{k}.unit")
            anchor = spec.get("anchor")
            shift = 0.0
            if anchor is not None:
                if name != "clock_offset":
                    raise InputError("only the clock offset can count from a telemetry event",
                                     key=f"{k}.anchor")
                if not isinstance(anchor, str) or not anchor:
                    raise InputError(f"expected the name of a telemetry flag, got {anchor!r}",
                                     key=f"{k}.anchor")
                if spec.get("prior") == "lognormal":
                    raise InputError("an anchored prior cannot be log-normal (it counts from an "
                                     "event, so it may be negative)", key=f"{k}.prior")
                if anchors is not None:
                    shift = float(anchors.get(anchor, math.nan))
                    if not math.isfinite(shift):
                        raise InputError(f"the record has no rising edge of '{anchor}' to "
                                         "count this prior from", source=source,
                                         key=f"{k}.anchor")

            def num(sub, default=None, scale=True, shifted=False):
                if sub not in spec:
                    if default is None:
                        raise InputError("missing", key=f"{k}.{sub}")
                    return default
                v = spec[sub]
                if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                    raise InputError(f"expected a finite number, got {v!r}", key=f"{k}.{sub}")
                return float(v) * (f if scale else 1.0) + (shift if shifted else 0.0)

            if "fixed" in spec:
                extra = set(spec) - {"fixed", "unit", "anchor"}
                if extra:
                    raise InputError(f"a fixed parameter takes only 'fixed', 'unit' and "
                                     f"'anchor', not {', '.join(sorted(extra))}", key=k)
                out.append(Parameter(name, si, num("fixed", shifted=True)))
                continue
            kind = spec.get("prior", "uniform")
            at = {"anchor": anchor, "anchor_t": shift} if anchor is not None else {}
            try:
                if kind == "uniform":
                    lo, hi = num("lower", shifted=True), num("upper", shifted=True)
                    prior = Prior("uniform", lo, hi, **at)
                elif kind == "normal":
                    m, s = num("mean", shifted=True), num("sd")
                    prior = Prior("normal", num("lower", m - _TRUNC * s, shifted=True),
                                  num("upper", m + _TRUNC * s, shifted=True), m, s, **at)
                elif kind == "lognormal":
                    med, s = num("median"), num("sigma", scale=False)
                    prior = Prior("lognormal", num("lower", med * math.exp(-_TRUNC * s)),
                                  num("upper", med * math.exp(_TRUNC * s)), med, s)
                else:
                    raise InputError(f"unknown prior '{kind}' (uniform, normal, lognormal)")
            except InputError as exc:
                if exc.key is None:
                    exc.key = f"{k}.prior"
                raise
            start = num("start", float(prior.ppf(0.5)), shifted=True)
            if not prior.lower <= start <= prior.upper:
                raise InputError("start lies outside [lower, upper]", key=f"{k}.start")
            step = None
            if "step" in spec:
                step = num("step")
                if not 0.0 < step < prior.upper - prior.lower:
                    raise InputError("must be > 0 and smaller than the prior's range",
                                     key=f"{k}.step")
            out.append(Parameter(name, si, start, prior, step))
        return cls(out)

    # ------------------------------------------------------------------------------------
    def full(self, theta: np.ndarray) -> np.ndarray:
        """Free batch ``(n, n_free)`` -> all parameters ``(n, n_all)`` with fixed values."""
        theta = np.atleast_2d(np.asarray(theta, float))
        out = np.repeat(self._template[None, :], theta.shape[0], axis=0)
        out[:, self.free_index] = theta
        return out

    def start(self) -> np.ndarray:
        """Nominal (start) values of the free parameters."""
        return self._template[self.free_index].copy()

    def log_prior(self, theta: np.ndarray) -> np.ndarray:
        """Log prior density (unnormalized) of a batch, ``(n,)``; -inf outside the bounds."""
        theta = np.atleast_2d(np.asarray(theta, float))
        lp = np.zeros(theta.shape[0])
        for j, p in enumerate(self.free):
            lp += p.prior.logpdf(theta[:, j])
        return lp

    def prior_residuals(self, theta: np.ndarray) -> np.ndarray:
        """Prior residuals for least squares of one vector (uniform priors add none)."""
        out = [r for j, p in enumerate(self.free)
               if (r := p.prior.residual(theta[j])) is not None]
        return np.array(out, float).reshape(-1)

    def ppf(self, u: np.ndarray) -> np.ndarray:
        """Map points of the unit cube ``(n, n_free)`` through the prior quantile functions."""
        u = np.atleast_2d(np.asarray(u, float))
        return np.column_stack([p.prior.ppf(u[:, j]) for j, p in enumerate(self.free)])

    def sample_prior(self, n: int, rng: np.random.Generator) -> np.ndarray:
        return self.ppf(rng.random((n, self.ndim)))

    def latin_hypercube(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` points stratified in every prior marginal (one per prior-probability stratum)."""
        u = (np.argsort(rng.random((self.ndim, n)), axis=1).T + rng.random((n, self.ndim))) / n
        return self.ppf(u)

    def prior_interval(self, level: float) -> np.ndarray:
        """Central ``level`` interval of each truncated prior, ``(n_free, 2)``."""
        a = 0.5 * (1 - level)
        return self.ppf(np.array([[a] * self.ndim, [1 - a] * self.ndim])).T

    def fd_steps(self, fraction: float) -> np.ndarray:
        """Finite-difference steps [SI] of the free parameters: each one's ``step`` where
        given, else ``fraction`` times its prior's spread (:meth:`prior_scale`)."""
        default = fraction * self.prior_scale()
        return np.array([p.step if p.step is not None else d
                         for p, d in zip(self.free, default)], float)

    def prior_scale(self) -> np.ndarray:
        """A typical spread of each prior (half its central 68 % interval) [SI]."""
        iv = self.prior_interval(0.6827)
        return 0.5 * (iv[:, 1] - iv[:, 0])


class GaussianProblem:
    """What the engines need of a problem with a Gaussian likelihood of whitened residuals,
    written once for :class:`ReconstructionProblem` and :class:`ResidualProblem`.

    A subclass sets :attr:`space` (a :class:`ParameterSpace`) and ``_log_norm`` (the
    likelihood's normalizing constant), and defines :meth:`residuals` (whitened, ``(n, m)`` for
    a batch, ``(m,)`` for one vector, NaN where the model failed) and :attr:`n_residuals`.
    """

    space: ParameterSpace
    _log_norm: float

    def residuals(self, theta: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    @property
    def n_residuals(self) -> int:
        raise NotImplementedError

    @property
    def names(self) -> tuple[str, ...]:
        """Names of the free parameters (the engines' vector)."""
        return self.space.free_names

    @property
    def ndim(self) -> int:
        return self.space.ndim

    def log_prior(self, theta: np.ndarray) -> np.ndarray:
        return self.space.log_prior(theta)

    def log_likelihood(self, theta: np.ndarray) -> np.ndarray:
        """Gaussian log-likelihood of a batch ``(n,)``; -inf where the model failed."""
        r = self.residuals(np.atleast_2d(np.asarray(theta, float)))
        ll = -0.5 * np.sum(r * r, axis=1) + self._log_norm
        return np.where(np.isfinite(ll), ll, -np.inf)

    def log_probability(self, theta: np.ndarray) -> np.ndarray:
        """Log posterior (unnormalized) of a batch ``(n, n_free)`` -> ``(n,)``.

        The model runs only on rows inside the prior bounds. Suitable for
        ``emcee.EnsembleSampler(..., vectorize=True)``.
        """
        theta = np.atleast_2d(np.asarray(theta, float))
        lp = self.log_prior(theta)
        ok = np.isfinite(lp)
        out = np.full(theta.shape[0], -np.inf)
        if ok.any():
            out[ok] = lp[ok] + self.log_likelihood(theta[ok])
        return out

    __call__ = log_probability

    def least_squares_residuals(self, theta: np.ndarray) -> np.ndarray:
        """Whitened residuals followed by the prior residuals, for one vector; a failed model
        gives a large finite residual (1e3 per entry) so that optimizers step back."""
        theta = np.asarray(theta, float)
        r = self.residuals(theta)
        r = np.where(np.isfinite(r), r, 1e3)
        return np.concatenate([r, self.space.prior_residuals(theta)])


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


class ResidualProblem(GaussianProblem):
    """Gaussian likelihood of the residuals of a residual function, for the engines.

    .. math::  \\log p(\\theta \\mid d) = \\log \\pi(\\theta)
               - \\tfrac12 \\sum_i \\bigl(r_i(\\theta) / \\sigma_i\\bigr)^2
               - \\sum_i \\log \\sigma_i - \\tfrac m2 \\log 2\\pi

    Parameters
    ----------
    space
        The parameters (fixed ones included) and their priors.
    residuals_fn
        ``residuals_fn(params) -> (n, m)``: a batch ``(n, len(space.names))`` of *every*
        parameter of ``space``, in its order [SI], to model minus data [data units]; NaN where
        the model fails.
    n_residuals
        ``m``.
    sigma
        Noise standard deviation of each residual [data units], a scalar or ``(m,)``.
    groups
        ``{name: slice}``: residuals that share one noise level (a channel of a record), for
        :meth:`noise_estimate`; default one group ``"all"``.

    Attributes
    ----------
    n_evaluations
        Parameter vectors the residual function has been called with so far (each one a
        forward run of the model).
    """

    def __init__(self, space: ParameterSpace, residuals_fn: Callable[[np.ndarray], np.ndarray],
                 n_residuals: int, *, sigma: float | np.ndarray = 1.0,
                 groups: Mapping[str, slice] | None = None) -> None:
        self.space = space
        self.residuals_fn = residuals_fn
        self._m = int(n_residuals)
        sig = np.broadcast_to(np.asarray(sigma, float), (self._m,)).copy()
        if not (np.all(np.isfinite(sig)) and np.all(sig > 0)):
            raise ValueError("every noise level sigma must be finite and positive")
        self.sigma = sig
        self.groups = dict(groups) if groups is not None else {"all": slice(0, self._m)}
        self._log_norm = float(-np.sum(np.log(sig)) - 0.5 * self._m * math.log(2 * math.pi))
        self.n_evaluations = 0

    def with_sigma(self, sigma: float | np.ndarray) -> "ResidualProblem":
        """The same problem with other noise levels (the evaluation count carries over)."""
        out = ResidualProblem(self.space, self.residuals_fn, self._m, sigma=sigma,
                              groups=self.groups)
        out.n_evaluations = self.n_evaluations
        return out

    @property
    def n_residuals(self) -> int:
        return self._m

    def raw_residuals(self, theta: np.ndarray) -> np.ndarray:
        """Model minus data [data units] of a free-parameter batch ``(n, n_free)`` ->
        ``(n, m)``."""
        full = self.space.full(theta)
        self.n_evaluations += full.shape[0]
        r = np.asarray(self.residuals_fn(full), float)
        if r.shape != (full.shape[0], self._m):
            raise ValueError(f"the residual function returned shape {r.shape}, expected "
                             f"{(full.shape[0], self._m)}")
        return r

    def noise_estimate(self, theta: np.ndarray, groups: Sequence[str] | None = None
                       ) -> np.ndarray:
        """Noise levels [data units] re-estimated from the residuals at ``theta`` (one free
        parameter vector, the optimum), one per group of :attr:`groups`.

        .. math::  \\hat\\sigma_g^2 = \\frac{\\sum_{i \\in g} r_i^2}{m_g (1 - d / m)}

        (``d`` free parameters, ``m`` residuals: the reduced chi-square of each group, the
        degrees of freedom shared in proportion to the group sizes). Groups not named in
        ``groups`` (default: all) keep their noise level. Returns ``(m,)``, for
        :meth:`with_sigma`.
        """
        r = self.raw_residuals(np.atleast_2d(np.asarray(theta, float)))[0]
        sig = self.sigma.copy()
        dof = 1.0 - self.space.ndim / self._m
        if not dof > 0:
            raise ValueError("no degrees of freedom left to estimate the noise from")
        for name, sl in self.groups.items():
            if groups is not None and name not in groups:
                continue
            rg = r[sl]
            s = float(np.sqrt(np.sum(rg * rg) / (rg.size * dof)))
            sig[sl] = s if s > 0 and np.isfinite(s) else sig[sl]
        return sig

    def residuals(self, theta: np.ndarray) -> np.ndarray:
        """Whitened residuals; ``(n, m)`` for a batch, ``(m,)`` for one vector. NaN where the
        model failed."""
        theta = np.asarray(theta, float)
        r = self.raw_residuals(np.atleast_2d(theta)) / self.sigma[None, :]
        return r[0] if theta.ndim == 1 else r
