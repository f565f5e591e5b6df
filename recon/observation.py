"""Sensor models: simulated channels -> what the telemetry recorder would have written.

For a continuous channel :math:`x(s)` of the simulation (time :math:`s` [s] from first
contact) the telemetry sample stamped :math:`\\tau` [s] is modelled as

.. math::

    y(\\tau) = k\\,x\\big(\\mathrm{hold}_h(\\tau - \\delta - \\ell)\\big) + b + \\varepsilon,
    \\qquad \\varepsilon \\sim N(0, \\sigma^2 + q^2/12)

with clock offset :math:`\\delta` (telemetry time = simulation time + :math:`\\delta`), sensor
latency :math:`\\ell`, sample-and-hold :math:`\\mathrm{hold}_h(s) = h\\lfloor s/h \\rfloor` of the
sensor's own sampler (period :math:`h`, none when 0), scale :math:`k`, bias :math:`b`, white
noise :math:`\\sigma` and quantization step :math:`q`.

A quantized reading (step :math:`q`) enters the likelihood through its exact probability, the
Gaussian mass of its quantization bin (:func:`quantized_residuals`).

Binary channels (contact, capture, latches) are compared through their switching times, not
sample by sample (a sample-wise 0/1 mismatch is flat in the parameters almost everywhere). The
k-th rising (falling) edge of the telemetry is matched with the k-th rising (falling) edge of
the simulation; the telemetry edge time is the midpoint of the two samples that bracket it and
its uncertainty that of a uniform distribution over the bracket
(:math:`\\sigma_t^2 = \\sigma_{timing}^2 + \\Delta\\tau^2/12 + \\Delta s^2/12`), where
:math:`\\Delta s^2/12` is the same for the simulated edge taken between two output samples. A
forward model that times a flag's first rising edge itself, at its integration step
(:attr:`Simulated.first_rise`), gives that edge exactly: the simulated edge is then that time
and its :math:`\\Delta s` is zero. This matters: with 10-ms output, a simulated edge moves in
10-ms jumps as the parameters change, so each edge's residual is a staircase in the
parameters, and on a record with seven flag edges (a peripheral unit's capture and six
latches) the cost jumps by 2-6 units in a saw-tooth that stops a gradient polish short of the
optimum. A telemetry edge
with no simulated partner inside the record counts as if the simulated edge fell at the end of
the record, and every simulated edge without a telemetry partner adds its distance to the end
of the record, so the residual is continuous when an edge leaves the record and the residual
vector has a fixed length.

The simulation covers each row's own time span (rows of a batch may end at different times,
NaN after their end; the grid may start before the start plane, where the forward model
extends the free flight backwards). A telemetry sample is never compared with a value from
outside it: :meth:`BoundObservation.residuals` raises :class:`SpanError` when a sample's
simulation time falls outside its row's span. The fitted span (:mod:`recon.span`) is chosen so
that this cannot happen inside the prior bounds, so the error means a bug, not bad data.

Parameter names the observation model consumes (everything else goes to the forward model):
``clock_offset`` [s], ``<channel>_bias`` [channel unit], ``<channel>_scale`` [-],
``<channel>_latency`` [s].

References
----------
docking-contact-models.md, section 11 (post-flight workflow) and 12.12 (telemetry-sensor models).
"""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from models.errors import InputError
from models.schema import Table, keys
from recon.telemetry import Telemetry, binary_channels, known_channels

__all__ = [
    "Simulated",
    "ChannelModel",
    "ObservationModel",
    "BoundObservation",
    "OBSERVATION_SUFFIXES",
    "SpanError",
    "edges",
    "interp_rows",
]

#: Suffixes of per-channel observation parameters and the unit they carry
#: (``None``: the channel's own unit).
OBSERVATION_SUFFIXES: dict[str, str | None] = {"bias": None, "scale": "", "latency": "s"}


class SpanError(RuntimeError):
    """A telemetry sample fell outside the simulated span of a row (module docstring)."""


@dataclasses.dataclass(frozen=True, eq=False)
class Simulated:
    """Simulated channels of a batch of forward runs.

    Attributes
    ----------
    t
        Simulation time grid [s] from the start of the simulation, shape ``(n_t,)``, increasing.
    channels
        Channel name -> values [SI], shape ``(n_batch, n_t)``.
    first_rise
        Binary channel name -> the time [s] of its first rising edge as the forward model
        timed it, at its integration step, shape ``(n_batch,)``, NaN where the flag never
        rose (the kernels time their events; :attr:`models.unit.DockingUnit.flag_events`).
        A binary channel's first simulated rising edge is then that time, not the midpoint
        of the output samples around it (module docstring).
    """

    t: np.ndarray
    channels: Mapping[str, np.ndarray]
    first_rise: Mapping[str, np.ndarray] = dataclasses.field(default_factory=dict)

    @classmethod
    def coerce(cls, obj: Any) -> "Simulated":
        if isinstance(obj, Simulated):
            return obj
        if isinstance(obj, Mapping) and "t" in obj:
            return cls(np.asarray(obj["t"], float),
                       {k: np.atleast_2d(np.asarray(v, float)) for k, v in obj.items() if k != "t"})
        raise TypeError("forward model must return Simulated or a mapping with 't'")

    @property
    def n_batch(self) -> int:
        return next(iter(self.channels.values())).shape[0] if self.channels else 0


@dataclasses.dataclass(frozen=True)
class ChannelModel:
    """Sensor model of one channel.

    Parameters
    ----------
    name
        Channel name (a telemetry column and a simulated channel).
    sigma
        Noise standard deviation [channel unit]; for binary channels the timing
        uncertainty of a switch [s].
    bias
        Additive bias [channel unit] (ignored for binary channels).
    scale
        Scale factor [-] (ignored for binary channels).
    quantum
        Quantization step [channel unit]; 0 for none.
    latency
        Delay between the physical value and its time stamp [s].
    hold
        Period [s] of the sensor's own sample-and-hold; 0 for none.
    """

    name: str
    sigma: float
    bias: float = 0.0
    scale: float = 1.0
    quantum: float = 0.0
    latency: float = 0.0
    hold: float = 0.0

    def __post_init__(self) -> None:
        if not (np.isfinite(self.sigma) and self.sigma > 0):
            raise InputError(f"sigma must be > 0, got {self.sigma}", key=f"{self.name}.sigma")
        for k in ("quantum", "hold", "latency"):
            v = getattr(self, k)
            if not (np.isfinite(v) and v >= 0):
                raise InputError(f"{k} must be >= 0, got {v}", key=f"{self.name}.{k}")

    @property
    def binary(self) -> bool:
        return self.name in binary_channels()

    @property
    def sigma_eff(self) -> float:
        """Noise standard deviation including quantization (Sheppard) [channel unit]."""
        return float(np.sqrt(self.sigma ** 2 + self.quantum ** 2 / 12.0))


#: a ``[observation.channels.NAME]`` table (:mod:`models.schema`): the fields of
#: :class:`ChannelModel`; ``"auto"`` sigma and quantum are estimated from the record before
#: this module reads them (:func:`recon.noise.resolve_auto`)
CHANNEL = Table("NAME", "Sensor model of the channel NAME (recon.observation.ChannelModel).",
                keys("""
sigma   | number/auto | channel unit | required | >0  | noise standard deviation; for a binary
| channel the timing uncertainty of a switch [s]; "auto": estimated from the record's
| pre-contact segment
bias    | number      | channel unit | 0.0      | -   | additive bias (not for binary channels)
scale   | number      | -            | 1.0      | -   | scale factor (not for binary channels)
quantum | number/auto | channel unit | 0.0      | >=0 | quantization step (0: none; "auto": from
| the record)
latency | number      | s            | 0.0      | >=0 | delay between the physical value and
| its time stamp
hold    | number      | s            | 0.0      | >=0 | period of the sensor's own
| sample-and-hold (0: none)
"""), source=False)

#: the ``[observation]`` table of a run configuration (:mod:`models.schema`)
OBSERVATION = Table("observation", "The fitted channels and their noise "
                    "(recon.observation.ObservationModel).", keys("""
clock_offset | number | s | 0.0 | - | record clock minus model clock (a fitted parameter of
| the same name overrides it)
""") + (Table("channels", "One table per fitted channel.", required=True, source=False,
              item=CHANNEL, item_name="NAME"),), required=True, source=False)


@dataclasses.dataclass(frozen=True)
class ObservationModel:
    """Sensor models of the fitted channels and the clock offset.

    Parameters
    ----------
    channels
        One :class:`ChannelModel` per fitted channel.
    clock_offset
        Telemetry time minus simulation time [s].
    """

    channels: tuple[ChannelModel, ...]
    clock_offset: float = 0.0

    def __post_init__(self) -> None:
        names = [c.name for c in self.channels]
        if len(set(names)) != len(names):
            raise InputError("a channel appears twice in the observation model", key="observation")
        if not self.channels:
            raise InputError("no channel to fit", key="observation")

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.channels)

    def channel(self, name: str) -> ChannelModel:
        for c in self.channels:
            if c.name == name:
                return c
        raise KeyError(name)

    def parameter_names(self) -> dict[str, str]:
        """Every parameter name this model understands -> its SI unit."""
        out = {"clock_offset": "s"}
        for c in self.channels:
            unit = known_channels().get(c.name, "")
            out[f"{c.name}_latency"] = "s"
            if not c.binary:
                out[f"{c.name}_bias"] = unit
                out[f"{c.name}_scale"] = ""
        return out

    def defaults(self) -> dict[str, float]:
        """Value of every observation parameter when it is not in the parameter space."""
        out = {"clock_offset": self.clock_offset}
        for c in self.channels:
            out[f"{c.name}_latency"] = c.latency
            if not c.binary:
                out[f"{c.name}_bias"] = c.bias
                out[f"{c.name}_scale"] = c.scale
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], *, key: str = "observation") -> "ObservationModel":
        """From a TOML table (all values SI).

        Layout::

            clock_offset = 0.0          # [s]
            [channels.stroke]
            sigma = 2e-4                # [m]  (all values SI)
            quantum = 1e-4
            [channels.contact]
            sigma = 0.005               # timing uncertainty [s]
        """
        allowed = OBSERVATION.names()
        for k in d:
            if k not in allowed:
                raise InputError(f"unknown key (allowed: {', '.join(sorted(allowed))})",
                                 key=f"{key}.{k}")
        chans = d.get("channels")
        if not isinstance(chans, Mapping) or not chans:
            raise InputError("give at least one [channels.NAME] table", key=f"{key}.channels")
        fields = CHANNEL.names()
        out = []
        for name, spec in chans.items():
            if not isinstance(spec, Mapping):
                raise InputError("expected a table", key=f"{key}.channels.{name}")
            for k in spec:
                if k not in fields:
                    raise InputError(f"unknown key (allowed: {', '.join(sorted(fields))})",
                                     key=f"{key}.channels.{name}.{k}")
            if "sigma" not in spec:
                raise InputError("missing", key=f"{key}.channels.{name}.sigma")
            try:
                out.append(ChannelModel(name, **{k: float(v) for k, v in spec.items()}))
            except InputError as exc:
                exc.key = f"{key}.channels.{exc.key}"
                raise
            except (TypeError, ValueError):
                raise InputError("values must be numbers", key=f"{key}.channels.{name}") from None
        return cls(tuple(out), float(d.get("clock_offset", 0.0)))

    def bind(self, telemetry: Telemetry) -> "BoundObservation":
        """Precompute the telemetry side of the residuals."""
        return BoundObservation(self, telemetry)


# --------------------------------------------------------------------------------------------
def edges(t: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Switching times of a 0/1 signal sampled at ``t``.

    Returns
    -------
    rising, falling
        Edge times [s], the midpoints of the bracketing samples.
    rising_width, falling_width
        Widths [s] of the bracketing intervals.
    """
    t = np.asarray(t, float)
    b = np.asarray(y, float) > 0.5
    d = np.diff(b.astype(np.int8))
    i = np.flatnonzero(d)
    mid = 0.5 * (t[i] + t[i + 1])
    width = t[i + 1] - t[i]
    up = d[i] > 0
    return mid[up], mid[~up], width[up], width[~up]


def interp_rows(tgrid: np.ndarray, x: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Linear interpolation of each row of ``x`` (n, n_t) on ``tgrid`` at ``s`` (n, m);
    NaN outside the grid and wherever a row has no value (after its end)."""
    n_t = tgrid.size
    j = np.clip(np.searchsorted(tgrid, s, side="right") - 1, 0, n_t - 2)
    t0 = tgrid[j]
    w = (s - t0) / (tgrid[j + 1] - t0)
    x0 = np.take_along_axis(x, j, axis=1)
    x1 = np.take_along_axis(x, j + 1, axis=1)
    # the grid's own end points count as inside (rounding of t + offset - offset)
    slack = 1e-9 * (tgrid[-1] - tgrid[0])
    outside = (s < tgrid[0] - slack) | (s > tgrid[-1] + slack)
    # w is exactly 0 or 1 on a node: take that node alone, so a NaN neighbour beyond a row's
    # end does not spoil the value at its last sample
    out = np.where(w <= 0.0, x0, np.where(w >= 1.0, x1, x0 + w * (x1 - x0)))
    return np.where(outside, np.nan, out)


def _row_spans(t: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """First and last time of ``t`` at which each row of ``x`` (n, n_t) is finite (NaN for a
    row with no finite value: a failed simulation)."""
    fin = np.isfinite(x)
    anyf = fin.any(axis=1)
    first = np.argmax(fin, axis=1)
    last = x.shape[1] - 1 - np.argmax(fin[:, ::-1], axis=1)
    return (np.where(anyf, t[first], np.nan), np.where(anyf, t[last], np.nan))


def _check_span(name: str, tau: np.ndarray, s: np.ndarray, t_sim: np.ndarray,
                x: np.ndarray) -> None:
    """Raise :class:`SpanError` if a sample's simulation time ``s`` (n, m) lies outside its
    row's simulated span (rows that failed are skipped: their residuals are NaN anyway)."""
    lo, hi = _row_spans(t_sim, x)
    slack = 1e-9 * max(1.0, float(t_sim[-1] - t_sim[0]))
    ok = np.isfinite(lo)
    if not ok.any() or s.shape[1] == 0:
        return
    bad = ok[:, None] & ((s < lo[:, None] - slack) | (s > hi[:, None] + slack))
    if bad.any():
        i, k = np.argwhere(bad)[0]
        raise SpanError(f"channel {name}: the sample at {tau[k]:.6g} s reads the simulation at "
                        f"{s[i, k]:.6g} s, outside row {i}'s simulated span "
                        f"[{lo[i]:.6g}, {hi[i]:.6g}] s")


def _log_bin(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """``log(Phi(hi) - Phi(lo))`` for ``lo < hi``, accurate in both tails."""
    from scipy.special import log_ndtr

    flip = lo > 0   # bin in the upper tail: Phi(hi) - Phi(lo) = Phi(-lo) - Phi(-hi)
    a = np.where(flip, -hi, lo)
    b = np.where(flip, -lo, hi)
    lb = log_ndtr(b)
    return lb + np.log1p(-np.exp(log_ndtr(a) - lb))


def _log_p_max(sigma: float, quantum: float) -> float:
    """Largest probability of a reading: the bin centred on the true value."""
    h = 0.5 * quantum / sigma
    return float(_log_bin(np.array([-h]), np.array([h]))[0])


def quantized_residuals(pred: np.ndarray, y: np.ndarray, sigma: float, quantum: float
                        ) -> np.ndarray:
    r"""Signed residuals of quantized readings under the exact likelihood.

    The sensor adds Gaussian noise (``sigma``) to the true value and rounds to multiples of
    ``quantum``, so a reading ``y`` has probability
    :math:`P(y\mid x) = \Phi((y + q/2 - x)/\sigma) - \Phi((y - q/2 - x)/\sigma)`. The residual
    :math:`r = \operatorname{sign}(x - y)\sqrt{2(\ln P_{max} - \ln P(y\mid x))}` has
    :math:`-r^2/2 = \ln P - \ln P_{max}`: least squares on ``r`` maximizes the exact
    likelihood, and ``r`` is smooth through ``x = y`` (Gauss-Newton works as usual).

    Why not the Sheppard approximation (Gaussian with variance sigma^2 + q^2/12): when sigma is
    below about q/2 the rounding error is not noise but a periodic function of the true value,
    the same on neighbouring samples of a smooth signal; fitted as noise it biases the fit and
    narrows its intervals. On the nominal shipped flight (stroke: sigma 0.2 mm, q 0.5 mm) the
    noise-free but quantized record alone moved the closing velocity by 3.5e-5 m/s, about one
    posterior sd, and the shipped flights put the truth 2.7-2.8 sd from the posterior median.
    """
    d = pred - y
    lo = (y - 0.5 * quantum - pred) / sigma
    hi = (y + 0.5 * quantum - pred) / sigma
    excess = _log_p_max(sigma, quantum) - _log_bin(lo, hi)
    return np.sign(d) * np.sqrt(np.clip(2.0 * excess, 0.0, None))


class BoundObservation:
    """An observation model bound to one telemetry record: residuals, predictions, synthesis.

    Residual layout (fixed length :attr:`n_residuals`): channels in the order of the model;
    a continuous channel contributes one whitened residual per telemetry sample; a binary
    channel one per telemetry edge (rising edges first, then falling) and one for the
    simulated edges without a telemetry partner.
    """

    def __init__(self, model: ObservationModel, telemetry: Telemetry) -> None:
        self.model = model
        self.telemetry = telemetry
        self._obs: list[dict[str, Any]] = []
        n = 0
        for c in model.channels:
            if c.name not in telemetry.channels:
                raise InputError("channel is in the observation model but not in the telemetry",
                                 source=telemetry.source, key=c.name)
            t, y = telemetry.samples(c.name)
            if t.size < 2:
                raise InputError("fewer than two samples", source=telemetry.source, key=c.name)
            entry: dict[str, Any] = {"model": c, "t": t, "y": y, "start": n}
            if c.binary:
                r, f, wr, wf = edges(t, y)
                entry.update(rising=r, falling=f, wr=wr, wf=wf, t_first=t[0], t_last=t[-1])
                n += r.size + f.size + 1
            else:
                n += t.size
            entry["stop"] = n
            self._obs.append(entry)
        self.n_residuals = n

    def observed(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """Each channel's samples in the bound telemetry: ``{name: (t [s], y [SI])}``."""
        return {e["model"].name: (e["t"], e["y"]) for e in self._obs}

    def channel_slices(self) -> dict[str, slice]:
        """Columns of each channel in the residual vector (see the class docstring)."""
        return {e["model"].name: slice(e["start"], e["stop"]) for e in self._obs}

    # ---------------------------------------------------------------------------------------
    def _param(self, params: Mapping[str, np.ndarray], name: str, n: int) -> np.ndarray:
        if name in params:
            return np.broadcast_to(np.asarray(params[name], float), (n,))
        return np.full(n, self.model.defaults()[name])

    def _sim_time(self, entry, params, n):
        c = entry["model"]
        off = self._param(params, "clock_offset", n)
        lat = self._param(params, f"{c.name}_latency", n)
        s = entry["t"][None, :] - off[:, None] - lat[:, None]
        if c.hold > 0 and not c.binary:
            s = np.floor(s / c.hold) * c.hold
        return s, off + lat

    def predict(self, sim: Simulated, params: Mapping[str, np.ndarray] | None = None
                ) -> dict[str, np.ndarray]:
        """Noise-free predicted telemetry at the telemetry time stamps of each channel.

        Returns ``{name: (n_batch, m_channel)}``; binary channels give the 0/1 flag.
        """
        sim = Simulated.coerce(sim)
        params = params or {}
        n = sim.n_batch
        out = {}
        for e in self._obs:
            c = e["model"]
            if c.name not in sim.channels:
                raise InputError("forward model does not produce this channel", key=c.name)
            s, _ = self._sim_time(e, params, n)
            x = interp_rows(sim.t, np.asarray(sim.channels[c.name], float), s)
            if c.binary:
                out[c.name] = np.where(np.isnan(x), np.nan, (x > 0.5).astype(float))
            else:
                out[c.name] = (self._param(params, f"{c.name}_scale", n)[:, None] * x
                               + self._param(params, f"{c.name}_bias", n)[:, None])
        return out

    def residuals(self, sim: Simulated, params: Mapping[str, np.ndarray] | None = None
                  ) -> np.ndarray:
        """Whitened residuals (prediction - telemetry) / sigma, shape ``(n_batch, n_residuals)``.

        Rows whose simulation failed (no finite value) are NaN. Raises :class:`SpanError`
        when a sample falls outside its row's simulated span (module docstring).
        """
        sim = Simulated.coerce(sim)
        params = params or {}
        n = sim.n_batch
        r = np.empty((n, self.n_residuals))
        dt_sim = float(np.median(np.diff(sim.t))) if sim.t.size > 1 else 0.0
        for e in self._obs:
            c = e["model"]
            a, b = e["start"], e["stop"]
            if c.name not in sim.channels:
                raise InputError("forward model does not produce this channel", key=c.name)
            x = np.asarray(sim.channels[c.name], float)
            if not c.binary:
                s, _ = self._sim_time(e, params, n)
                _check_span(c.name, e["t"], s, sim.t, x)
                pred = (self._param(params, f"{c.name}_scale", n)[:, None]
                        * interp_rows(sim.t, x, s)
                        + self._param(params, f"{c.name}_bias", n)[:, None])
                if c.quantum > 0:
                    r[:, a:b] = quantized_residuals(pred, e["y"][None, :], c.sigma, c.quantum)
                else:
                    r[:, a:b] = (pred - e["y"][None, :]) / c.sigma
                continue
            shift = self._param(params, "clock_offset", n) + self._param(
                params, f"{c.name}_latency", n)
            tr, tf = e["rising"], e["falling"]
            # the simulated edges' own uncertainty: the output step's bracket, except a first
            # rising edge the forward model timed (module docstring)
            exact = sim.first_rise.get(c.name)
            dt_r = np.full(tr.size, dt_sim)
            if exact is not None:
                exact = np.broadcast_to(np.asarray(exact, float), (n,))
                dt_r[:1] = 0.0
            sr = np.sqrt(c.sigma ** 2 + (e["wr"] ** 2 + dt_r ** 2) / 12.0)
            sf = np.sqrt(c.sigma ** 2 + (e["wf"] ** 2 + dt_sim ** 2) / 12.0)
            t_end = e["t_last"]
            ends = np.array([e["t_first"], t_end])
            _check_span(c.name, ends, ends[None, :] - shift[:, None], sim.t, x)
            for i in range(n):
                row = x[i]
                fin = np.flatnonzero(np.isfinite(row))
                if not fin.size:
                    r[i, a:b] = np.nan
                    continue
                rr, ff, _, _ = edges(sim.t[fin[0]:fin[-1] + 1], row[fin[0]:fin[-1] + 1])
                if exact is not None and rr.size and abs(rr[0] - exact[i]) <= dt_sim:
                    rr[0] = exact[i]
                rr = rr + shift[i]
                ff = ff + shift[i]
                rr = rr[(rr >= e["t_first"]) & (rr <= t_end)]
                ff = ff[(ff >= e["t_first"]) & (ff <= t_end)]
                out = []
                extra = []
                for tel, simv, sig in ((tr, rr, sr), (tf, ff, sf)):
                    k = min(tel.size, simv.size)
                    match = np.full(tel.size, t_end)
                    match[:k] = simv[:k]
                    out.append((match - tel) / sig)
                    extra.append(t_end - simv[tel.size:])
                res_extra = np.sqrt(np.sum(np.concatenate(extra) ** 2)) / c.sigma
                r[i, a:b] = np.concatenate([*out, [res_extra]])
        return r

    def log_norm_by_channel(self) -> dict[str, float]:
        """Each channel's part of :meth:`log_norm`: :math:`-m_c \\ln \\sigma_c -
        \\tfrac{m_c}{2}\\ln 2\\pi` over its ``m_c`` whitened residuals (quantized
        readings: :math:`m_c \\ln P_{max}`, a probability, not a density; see
        quantized_residuals)."""
        out = {}
        for e in self._obs:
            c = e["model"]
            m = e["stop"] - e["start"]
            if not c.binary and c.quantum > 0:
                out[c.name] = float(m * _log_p_max(c.sigma, c.quantum))
            else:
                out[c.name] = float(-m * np.log(c.sigma) - 0.5 * m * np.log(2 * np.pi))
        return out

    def log_norm(self) -> float:
        """:math:`-\\sum \\ln \\sigma - \\tfrac{m}{2}\\ln 2\\pi` of the whitened residuals
        (the sum of :meth:`log_norm_by_channel`)."""
        return float(sum(self.log_norm_by_channel().values()))

    # ---------------------------------------------------------------------------------------
    def synthesize(self, sim_t: np.ndarray, sim: Mapping[str, np.ndarray],
                   rng: np.random.Generator, *, noise: bool = True) -> Telemetry:
        """Telemetry this sensor model would record of one simulation, at the time stamps
        of the bound telemetry (which then serves as a sampling template: NaN where a channel
        has no sample). Noise, bias, scale, latency, hold, clock offset and quantization are
        applied; the template's values are ignored."""
        sim_b = Simulated(np.asarray(sim_t, float),
                          {k: np.atleast_2d(np.asarray(v, float)) for k, v in sim.items()})
        pred = self.predict(sim_b, {})
        tel_t = np.asarray(self.telemetry.t, float)
        out = {}
        for e in self._obs:
            c = e["model"]
            y = pred[c.name][0].copy()
            if not c.binary:
                if noise:
                    y = y + rng.normal(0.0, c.sigma, y.size)
                if c.quantum > 0:
                    y = np.round(y / c.quantum) * c.quantum
            col = np.full(tel_t.size, np.nan)
            col[np.isin(tel_t, e["t"])] = y
            out[c.name] = col
        return Telemetry(tel_t, out, {}, self.telemetry.source)
