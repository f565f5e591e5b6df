"""Parameter spaces: named parameters with truncated priors, the vector every engine sees.

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
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from scipy import special

from models.errors import InputError
from models.schema import Table, keys
from models.units import registry, to_si

__all__ = ["Prior", "Parameter", "ParameterSpace"]

#: SI names preferred over pint's base-unit products, in this order.
_PREFERRED_SI = ("m", "s", "kg", "m/s", "rad/s", "N", "N*m", "N/m", "N*s/m", "N*m/rad",
                 "N*m*s/rad", "J", "W", "Pa", "kg*m**2")

_TRUNC = 6.0  # default truncation of normal / log-normal priors [standard deviations]
#: largest magnitude [SI] of a number of the [parameters] table: beyond it a value is a typo
#: or a unit slip (the physical ranges of models.limits stop at 1e18) and its arithmetic
#: overflows later
MAX_MAGNITUDE = 1e30
#: largest sigma of a log-normal prior (of ln x): e^(6 x 20) already spans 1e52
MAX_LOG_SIGMA = 20.0


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


#: a ``[parameters.NAME]`` table (:mod:`models.schema`); numbers in ``unit`` (SI without
#: one), each of magnitude at most :data:`MAX_MAGNITUDE` in SI
PARAMETER = Table("NAME", "Prior of the parameter NAME, or its fixed value "
                  "(identification.space.ParameterSpace.from_dict).", keys("""
prior  | choice:uniform,normal,lognormal | - | 'uniform' | - | the prior's family
lower  | number | unit | - | - | lower bound (uniform: required; normal: default mean - 6 sd;
| lognormal: median exp(-6 sigma))
upper  | number | unit | - | - | upper bound (uniform: required; normal: default mean + 6 sd;
| lognormal: median exp(6 sigma))
mean   | number | unit | - | - | mean of a normal prior
sd     | number | unit | - | - | standard deviation of a normal prior
median | number | unit | - | - | median of a lognormal prior
sigma  | number | -    | - | - | standard deviation of ln x of a lognormal prior, in (0, 20]
fixed  | number | unit | - | - | the parameter is fixed at this value (with only unit and
| anchor beside it)
unit   | string | -    | - | - | unit of the numbers (pint; default: SI)
start  | number | unit | - | - | start value of the search (default: the prior's median)
anchor | string | -    | - | - | clock_offset only: the telemetry flag whose first rising edge
| the numbers count from ("contact")
step   | number | unit | - | - | finite-difference step (default: a fraction of the prior
| spread, [optimizer] jac_step)
"""), source=False)

_KEYS = PARAMETER.names()


def _unit_factor(name: str, unit: str | None, key: str,
                 si_units: Mapping[str, str] | None = None) -> tuple[float, str]:
    """Multiplicative factor from ``unit`` to SI, and the SI unit string."""
    si = (si_units or {}).get(name)
    if si is None and name.endswith(("_latency",)):
        si = "s"
    if unit is None:
        return 1.0, si if si is not None else ""
    if si is None:  # a name not known in advance: SI is pint's base unit of the given unit
        ureg = registry()
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
        raise InputError(f"unit '{unit}' has an offset; give the value in an absolute unit",
                         key=key)
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
                  source: str | None = None,
                  si_units: Mapping[str, str] | None = None) -> "ParameterSpace":
        """From the ``[parameters]`` TOML table (see the module docstring).

        ``anchors`` maps telemetry flags to the time [s] of their first rising edge in the
        record (NaN: no edge); a table with ``anchor`` is shifted by it. Without ``anchors``
        (no record yet: checking a configuration, drawing from the priors) an anchored table
        keeps its numbers as offsets from the edge. ``source`` names the record in errors.
        ``si_units`` maps the names whose SI unit is known in advance to it (a reconstruction's
        initial conditions and clock); any other parameter takes pint's base unit of its
        ``unit`` (``rad`` for an angle unit), or none without one.
        """
        if not isinstance(table, Mapping) or not table:
            raise InputError("expected a table of parameters", key=key)
        out = []
        for name, spec in table.items():
            k = f"{key}.{name}"
            if not isinstance(spec, Mapping):
                raise InputError("expected a table (prior, bounds, unit) or {fixed = value}",
                                 key=k)
            for sub in spec:
                if sub not in _KEYS:
                    raise InputError(f"unknown key (allowed: {', '.join(sorted(_KEYS))})",
                                     key=f"{k}.{sub}")
            f, si = _unit_factor(name, spec.get("unit"), f"{k}.unit", si_units)
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
                if isinstance(v, bool) or not isinstance(v, (int, float)):
                    raise InputError(f"expected a finite number, got {v!r}", key=f"{k}.{sub}")
                try:
                    x = float(v) * (f if scale else 1.0)
                except OverflowError:   # an integer of hundreds of digits
                    x = math.inf
                if not abs(x) <= MAX_MAGNITUDE:
                    raise InputError(f"expected a finite number of magnitude at most "
                                     f"{MAX_MAGNITUDE:g} (SI), got {str(v)[:40]}",
                                     key=f"{k}.{sub}")
                return x + (shift if shifted else 0.0)

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
                    if not 0.0 < s <= MAX_LOG_SIGMA:
                        raise InputError(f"must be in (0, {MAX_LOG_SIGMA:g}] (of ln x)",
                                         key=f"{k}.sigma")
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
