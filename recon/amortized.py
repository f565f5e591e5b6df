"""A learned proposal: the starts of a reconstruction's search looked up from the record.

Every flight of a scenario is a draw from the same envelope, which the forward model can
simulate in advance. So instead of screening the prior box for every record (thousands of
forward runs), the search can start from where simulations of that envelope say a record like
this one comes from: amortized inference. The proposal is trained once per scenario and run
configuration (:func:`train`, ``dockrecon train``), and at reconstruction time
(:func:`learned_starts`) it

1. reads the record's summary statistics (:class:`Summary`: the fitted channels on a grid
   anchored on the record's first contact edge, the gyros' mean before contact, the times of
   the capture and latch edges after it), which do not depend on the record's clock or span;
2. checks that they lie inside what it was trained on (:class:`OutOfDistribution`: the
   distance in the training summaries' principal components, and the residual off them,
   against their 99.9 % quantiles over the training set); a record outside is handed to the
   global screen (:func:`recon.search.screened_starts`), which needs no training;
3. draws parameter vectors from its Gaussian (a multilayer perceptron, :class:`Network`,
   trained by maximum likelihood on simulated flights: for each summary, the mean and the
   standard deviation of each forward parameter), profiles the clock offset of each on the
   record's capture edge and returns the best few as the starts of the least-squares polish.

The posterior itself is not the network's: the polish, the Laplace approximation and the
importance sampling that follow use the exact likelihood of the record
(:mod:`identification.engines`), so the network only has to land the search in the right
basin; where it does not (the best fit implausible), the reconstruction searches again with
the global screen. Which path ran is in ``result.json`` (``diagnostics.search.starts``).

Proposals are cached by a digest of what they depend on (:func:`digest`: the scenario's
values, the free parameters' priors, the fitted channels and the summary's layout) in the
user's cache directory (:func:`cache_dir`), never in the package. The package ships the
proposals of its own presets and run configurations (:func:`shipped_dir`, ``make
proposals``: seeded, so they are rebuilt bit for bit on the same library versions), so the
shipped flights and the demo need no training; a test fails when a shipped preset changes
without its proposal being retrained. ``[optimizer] proposal`` of a run configuration
chooses (:func:`resolve_proposal`): ``"auto"`` (the default) uses the proposal of the run's
digest from the cache, else the shipped one, when there is one; ``"off"`` always screens;
a path names a proposal file, which must have been trained for the run's digest.

The network cannot stand in for the posterior: on the shipped realistic nominal flight a
proposal trained on 20 000 simulated flights predicts the closing velocity to 0.02 and the
lateral offset to 0.05 of the prior box, where the record pins them to a thousandth. What it
does do is land the polish in the basin, and in the posterior's several modes: the best
``keep`` of 64 learned draws, polished as the screen's best would be, reach the screen's
optimum and give the importance sampling its modes (docs/design/search.rst, "Learned
starts").
"""
from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import math
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from models.errors import InputError
from models.unit import DockingUnit
from recon.observation import interp_rows

__all__ = ["SUMMARY_VERSION", "Summary", "Network", "OutOfDistribution", "Proposal", "digest",
           "cache_dir", "shipped_dir", "find_proposal", "load_proposal", "resolve_proposal",
           "training_observation",
           "simulate_bank", "train", "train_scenario", "learned_starts", "PROPOSAL_CHOICES"]

#: version of the summary's definition: a proposal trained on another is not used
SUMMARY_VERSION = 2
#: ``[optimizer] proposal`` words (anything else is a proposal file's path)
PROPOSAL_CHOICES = ("auto", "off")
#: environment variable naming the cache directory of trained proposals
CACHE_ENV = "DOCKRECON_CACHE"
#: the proposals shipped with the package (:func:`shipped_dir`)
SHIPPED_DIR = Path(__file__).resolve().parent / "proposals"


# --------------------------------------------------------------------------------------------
# summary statistics
# --------------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Summary:
    """The summary statistics of a record that the proposal reads.

    Every feature is anchored on the first rising edge of the contact flag, so the clock of
    the record, where it starts and where it ends do not enter:

    * each continuous channel of ``continuous`` at ``t_c + tau`` for ``tau`` from ``-pre``
      to ``post`` [s] in steps of ``dt`` (linear interpolation between samples);
    * each gyro of ``rates``: its mean over ``[t_c - rate_window, t_c)`` (free flight: the
      relative rates), then its value every ``rate_dt`` [s] up to ``post``;
    * each flag of ``flags``: the time of its first rising edge after ``t_c`` [s], or
      ``post + 1`` when it has none within the record.

    Simulated flights (:meth:`of_simulation`) get the sensor noise ``sigma`` (per continuous
    channel, then per gyro [SI]), an anchor uncertain by ``jitter`` [s] (uniform: the
    flags are sampled, so a record's edge is known to a sample period) and, with probability
    ``gap_rate``, a dropout of the continuous channels up to ``max_gap`` [s] long somewhere in
    the window, bridged by a straight line as :meth:`of_record` bridges a record's (the
    mechanism channels of flight records drop out together for tenths of a second), so the
    network learns what a record can tell.
    """

    continuous: tuple[str, ...]
    rates: tuple[str, ...]
    flags: tuple[str, ...]
    sigma: tuple[float, ...]
    contact_flag: str = "contact"
    pre: float = 0.3
    post: float = 2.0
    dt: float = 0.05
    rate_window: float = 1.0
    rate_dt: float = 0.25
    jitter: float = 0.02
    gap_rate: float = 0.5
    max_gap: float = 0.6

    @classmethod
    def for_flight(cls, unit: DockingUnit, observation) -> "Summary":
        """The summary of a unit's record over the channels an observation model fits."""
        flags_with_events = dict((*unit.flag_events, *unit.clock_events))
        cont, rates, flags, sigma_c, sigma_r = [], [], [], [], []
        for c in observation.channels:
            kind = unit.channels[c.name].kind if c.name in unit.channels else "continuous"
            if c.binary:
                if c.name != unit.contact_flag and c.name in flags_with_events:
                    flags.append(c.name)
            elif kind == "rate":
                rates.append(c.name)
                sigma_r.append(float(c.sigma))
            else:
                cont.append(c.name)
                sigma_c.append(float(c.sigma))
        return cls(tuple(cont), tuple(rates), tuple(flags), tuple(sigma_c + sigma_r),
                   contact_flag=unit.contact_flag)

    @property
    def tau(self) -> np.ndarray:
        """Times [s] after the contact edge at which continuous channels are read."""
        n = int(round((self.pre + self.post) / self.dt))
        return -self.pre + self.dt * np.arange(n + 1)

    @property
    def tau_rates(self) -> np.ndarray:
        """Times [s] after the contact edge at which gyros are read."""
        return self.rate_dt * np.arange(1, int(round(self.post / self.rate_dt)) + 1)

    @property
    def size(self) -> int:
        return (len(self.continuous) * self.tau.size
                + len(self.rates) * (1 + self.tau_rates.size) + len(self.flags))

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Summary":
        return cls(**{k: (tuple(v) if isinstance(v, list) else v) for k, v in d.items()})

    # -- a record ------------------------------------------------------------------------
    def of_record(self, telemetry) -> tuple[np.ndarray | None, str]:
        """The record's feature vector [SI, s], or None and the reason it has none (no
        contact edge, a channel missing, the record not covering the summary's window).

        A continuous channel whose record starts less than ``pre`` before the first contact,
        but before it, is read at its first sample for the times before that sample: before
        the first contact the mechanism is at rest in free flight (probe, ring on its legs),
        so its channels hold their free-flight values, which the first sample is. A record
        cut a tenth of a second before contact is thus read as the simulated flights are,
        instead of being handed to the screen (a study's records are cut at a random time
        before contact)."""
        from recon.span import first_edge

        t_c = first_edge(telemetry, self.contact_flag)
        if not np.isfinite(t_c):
            return None, f"the record has no rising edge of '{self.contact_flag}'"
        out = []
        for name in (*self.continuous, *self.rates):
            if name not in telemetry.channels:
                return None, f"the record has no channel '{name}'"
        for name in self.continuous:
            t, y = telemetry.samples(name)
            if t.size < 2 or t[0] >= t_c or t[-1] < t_c + self.post:
                return None, (f"'{name}' does not cover the free flight before, and "
                              f"{self.post:g} s after, first contact")
            # np.interp holds the first sample before it: the free-flight value
            out.append(np.interp(t_c + self.tau, t, y))
        for name in self.rates:
            t, y = telemetry.samples(name)
            before = (t >= t_c - self.rate_window) & (t < t_c)
            if not before.any() or t[-1] < t_c + self.post:
                return None, f"'{name}' does not cover the summary's window"
            out.append([float(np.mean(y[before]))])
            out.append(np.interp(t_c + self.tau_rates, t, y))
        for name in self.flags:
            e = first_edge(telemetry, name) if name in telemetry.channels else math.nan
            out.append([e - t_c if np.isfinite(e) and e > t_c else self.post + 1.0])
        return np.concatenate([np.ravel(np.asarray(o, float)) for o in out]), ""

    # -- simulated flights ----------------------------------------------------------------
    def of_simulation(self, t: np.ndarray, channels: Mapping[str, np.ndarray],
                      contact: np.ndarray, flag_times: Mapping[str, np.ndarray],
                      rng: np.random.Generator | None) -> np.ndarray:
        """Feature vectors ``(n, size)`` of simulated flights: ``channels`` ``(n, n_t)`` [SI]
        on the simulation time ``t`` [s], ``contact`` ``(n,)`` each flight's first contact
        [s], ``flag_times`` each flag's first rising edge [s] (NaN: none). With ``rng``, the
        sensor noise and the anchor jitter (class docstring) are drawn; NaN rows where a
        flight does not cover the window."""
        n = contact.size
        anchor = contact + (rng.uniform(-0.5, 0.5, n) * self.jitter if rng is not None else 0.0)
        out = []
        sig = iter(self.sigma)

        def at(x: np.ndarray, s: np.ndarray) -> np.ndarray:
            return interp_rows(t, x, s)

        gap = None
        if rng is not None and self.gap_rate > 0:
            g0 = rng.uniform(-self.pre - self.max_gap, self.post, n)
            g1 = g0 + rng.uniform(0.0, self.max_gap, n)
            g1[rng.random(n) >= self.gap_rate] = -np.inf
            gap = (np.clip(g0, -self.pre, self.post), np.clip(g1, -self.pre, self.post))
        for name in self.continuous:
            v = at(channels[name], anchor[:, None] + self.tau[None, :])
            if gap is not None:
                v = _bridge(v, self.tau, gap[0], gap[1],
                            at(channels[name], anchor[:, None] + gap[0][:, None])[:, 0],
                            at(channels[name], anchor[:, None] + gap[1][:, None])[:, 0])
            s = next(sig)
            out.append(v + (rng.normal(0.0, s, v.shape) if rng is not None else 0.0))
        for name in self.rates:
            s = next(sig)
            x = channels[name]
            win = ((t[None, :] >= anchor[:, None] - self.rate_window)
                   & (t[None, :] < anchor[:, None]))
            with np.errstate(invalid="ignore"):
                mean = np.where(win, x, 0.0).sum(axis=1) / np.maximum(win.sum(axis=1), 1)
            mean[win.sum(axis=1) == 0] = np.nan
            # the mean of about 10 gyro samples a second over the window
            n_eff = max(1.0, 10.0 * self.rate_window)
            out.append((mean + (rng.normal(0.0, s / math.sqrt(n_eff), n) if rng is not None
                                else 0.0))[:, None])
            v = at(x, anchor[:, None] + self.tau_rates[None, :])
            out.append(v + (rng.normal(0.0, s, v.shape) if rng is not None else 0.0))
        for name in self.flags:
            e = np.asarray(flag_times[name], float) - anchor
            e = np.where(np.isfinite(e) & (e > 0), e, self.post + 1.0)
            out.append((e + (rng.normal(0.0, self.jitter / 2, n) if rng is not None
                             else 0.0))[:, None])
        return np.hstack(out)


def _bridge(v: np.ndarray, tau: np.ndarray, g0: np.ndarray, g1: np.ndarray, v0: np.ndarray,
            v1: np.ndarray) -> np.ndarray:
    """``v`` ``(n, m)`` on ``tau`` with each row's values strictly inside its gap ``(g0, g1)``
    [s] replaced by the straight line from ``v0`` at ``g0`` to ``v1`` at ``g1`` (rows with
    ``g1 <= g0``: unchanged)."""
    inside = (tau[None, :] > g0[:, None]) & (tau[None, :] < g1[:, None])
    span = np.where(g1 > g0, g1 - g0, 1.0)
    w = (tau[None, :] - g0[:, None]) / span[:, None]
    line = v0[:, None] * (1.0 - w) + v1[:, None] * w
    return np.where(inside, line, v)


# --------------------------------------------------------------------------------------------
# the network
# --------------------------------------------------------------------------------------------
class Network:
    """A multilayer perceptron ``features -> (mean, log sd)`` of a diagonal Gaussian over the
    forward parameters (in the unit box of their priors), trained by maximum likelihood
    (the mean Gaussian negative log likelihood) with Adam. Plain numpy, float32.

    Parameters
    ----------
    layers
        ``[(W, b), ...]`` weights and biases; ReLU between layers, none after the last,
        whose ``2 d`` outputs are the means and the log standard deviations.
    x_mean, x_sd
        Feature standardisation.
    """

    LOG_SD = (-9.0, 1.0)

    def __init__(self, layers: Sequence[tuple[np.ndarray, np.ndarray]], x_mean: np.ndarray,
                 x_sd: np.ndarray) -> None:
        self.layers = [(np.asarray(w, np.float32), np.asarray(b, np.float32)) for w, b in layers]
        self.x_mean = np.asarray(x_mean, np.float32)
        self.x_sd = np.asarray(x_sd, np.float32)

    @property
    def d_out(self) -> int:
        return self.layers[-1][1].size // 2

    def _forward(self, z: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
        acts = [z]
        h = z
        for i, (w, b) in enumerate(self.layers):
            h = h @ w + b
            if i < len(self.layers) - 1:
                h = np.maximum(h, 0.0)
            acts.append(h)
        return h, acts

    def predict(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(mean, sd)``, each ``(n, d)``, of the Gaussian of each feature row."""
        z = ((np.atleast_2d(x) - self.x_mean) / self.x_sd).astype(np.float32)
        out, _ = self._forward(z)
        d = self.d_out
        return (out[:, :d].astype(float),
                np.exp(np.clip(out[:, d:], *self.LOG_SD)).astype(float))

    @classmethod
    def fit(cls, x: np.ndarray, y: np.ndarray, *, hidden: Sequence[int] = (256, 256),
            epochs: int = 200, batch: int = 256, lr: float = 1e-3, seed: int = 0,
            validation: float = 0.1, patience: int = 20,
            progress: Callable[[int, int, float], None] | None = None
            ) -> tuple["Network", dict[str, Any]]:
        """Train on features ``x`` ``(n, k)`` and targets ``y`` ``(n, d)``; the last
        ``validation`` fraction (of a seeded permutation) is held out, and training stops
        when its loss has not improved for ``patience`` epochs (the best weights are kept).
        Returns the network and the training record (losses, epochs)."""
        rng = np.random.default_rng(seed)
        n = x.shape[0]
        perm = rng.permutation(n)
        n_val = max(1, int(validation * n))
        val, tr = perm[:n_val], perm[n_val:]
        x_mean = x[tr].mean(axis=0)
        x_sd = x[tr].std(axis=0)
        x_sd = np.where(x_sd > 0, x_sd, 1.0)
        z = ((x - x_mean) / x_sd).astype(np.float32)
        y = y.astype(np.float32)
        sizes = [z.shape[1], *hidden, 2 * y.shape[1]]
        layers = []
        for a, b in zip(sizes[:-1], sizes[1:]):
            w = rng.normal(0.0, math.sqrt(2.0 / a), (a, b)).astype(np.float32)
            layers.append([w, np.zeros(b, np.float32)])
        layers[-1][0] *= 0.1
        net = cls([tuple(p) for p in layers], x_mean, x_sd)
        net.layers = [list(p) for p in net.layers]
        m = [[np.zeros_like(p) for p in layer] for layer in net.layers]
        v = [[np.zeros_like(p) for p in layer] for layer in net.layers]
        b1, b2, eps = 0.9, 0.999, 1e-8
        step = 0
        best = (math.inf, None, 0)
        history = []
        for epoch in range(epochs):
            order = rng.permutation(tr)
            for k in range(0, order.size, batch):
                idx = order[k:k + batch]
                grads = net._gradients(z[idx], y[idx])
                step += 1
                for li, layer in enumerate(net.layers):
                    for pi in range(2):
                        g = grads[li][pi]
                        m[li][pi] = b1 * m[li][pi] + (1 - b1) * g
                        v[li][pi] = b2 * v[li][pi] + (1 - b2) * g * g
                        mh = m[li][pi] / (1 - b1 ** step)
                        vh = v[li][pi] / (1 - b2 ** step)
                        layer[pi] -= (lr * mh / (np.sqrt(vh) + eps)).astype(np.float32)
            loss = net._loss(z[val], y[val])
            history.append(loss)
            if progress is not None:
                progress(epoch + 1, epochs, loss)
            if loss < best[0] - 1e-4:
                best = (loss, [(w.copy(), b.copy()) for w, b in net.layers], epoch + 1)
            elif epoch + 1 - best[2] >= patience:
                break
        net.layers = [(w, b) for w, b in best[1]]
        record = {"validation_loss": float(best[0]), "epochs": len(history),
                  "best_epoch": int(best[2]), "n_train": int(tr.size), "n_validation": n_val,
                  "hidden": list(hidden), "batch": batch, "lr": lr, "seed": seed}
        return net, record

    def _loss(self, z: np.ndarray, y: np.ndarray) -> float:
        out, _ = self._forward(z)
        d = self.d_out
        ls = np.clip(out[:, d:], *self.LOG_SD)
        r = (y - out[:, :d]) * np.exp(-ls)
        return float(np.mean(0.5 * r * r + ls))

    def _gradients(self, z: np.ndarray, y: np.ndarray) -> list[list[np.ndarray]]:
        out, acts = self._forward(z)
        d = self.d_out
        n = z.shape[0]
        ls_raw = out[:, d:]
        ls = np.clip(ls_raw, *self.LOG_SD)
        inv = np.exp(-2.0 * ls)
        r = y - out[:, :d]
        g_mu = -r * inv
        g_ls = (1.0 - r * r * inv) * ((ls_raw > self.LOG_SD[0]) & (ls_raw < self.LOG_SD[1]))
        delta = np.hstack([g_mu, g_ls]).astype(np.float32) / (n * d)
        grads: list[list[np.ndarray]] = [None] * len(self.layers)  # type: ignore[list-item]
        for i in range(len(self.layers) - 1, -1, -1):
            w, _ = self.layers[i]
            grads[i] = [acts[i].T @ delta, delta.sum(axis=0)]
            if i > 0:
                delta = (delta @ w.T) * (acts[i] > 0)
        return grads


# --------------------------------------------------------------------------------------------
# out-of-distribution check
# --------------------------------------------------------------------------------------------
@dataclasses.dataclass
class OutOfDistribution:
    """Whether a feature vector looks like the training set's: its standardised features'
    distance in the first principal components (whitened) and its residual off them, each
    against the training set's ``quantile`` quantile (:meth:`check`)."""

    mean: np.ndarray
    sd: np.ndarray
    components: np.ndarray   # (k, n_features), rows orthonormal
    scales: np.ndarray       # (k,) sd of each component over the training set
    d_limit: float
    r_limit: float
    quantile: float = 0.999

    @classmethod
    def fit(cls, x: np.ndarray, *, k: int = 16, quantile: float = 0.999) -> "OutOfDistribution":
        mean = x.mean(axis=0)
        sd = np.where(x.std(axis=0) > 0, x.std(axis=0), 1.0)
        z = (x - mean) / sd
        _, s, vt = np.linalg.svd(z, full_matrices=False)
        k = min(k, vt.shape[0])
        comp = vt[:k]
        scales = s[:k] / math.sqrt(max(1, x.shape[0] - 1))
        ood = cls(mean, sd, comp, scales, 0.0, 0.0, quantile)
        d, r = ood.distances(x)
        ood.d_limit = float(np.quantile(d, quantile))
        ood.r_limit = float(np.quantile(r, quantile))
        return ood

    def distances(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(distance in the components, residual off them)`` of each row of ``x``."""
        z = (np.atleast_2d(x) - self.mean) / self.sd
        p = z @ self.components.T
        d = np.sqrt(np.sum((p / self.scales) ** 2, axis=1))
        r = np.sqrt(np.maximum(np.sum(z * z, axis=1) - np.sum(p * p, axis=1), 0.0))
        return d, r

    def check(self, x: np.ndarray) -> tuple[bool, dict[str, float]]:
        """``(inside, {"distance", "distance_limit", "residual", "residual_limit"})``."""
        d, r = self.distances(x)
        info = {"distance": float(d[0]), "distance_limit": self.d_limit,
                "residual": float(r[0]), "residual_limit": self.r_limit}
        return bool(d[0] <= self.d_limit and r[0] <= self.r_limit), info


# --------------------------------------------------------------------------------------------
# the proposal: summary, network, out-of-distribution check, the parameters it predicts
# --------------------------------------------------------------------------------------------
@dataclasses.dataclass
class Proposal:
    """A trained proposal (module docstring)."""

    summary: Summary
    network: Network
    ood: OutOfDistribution
    names: tuple[str, ...]        # the forward parameters it predicts
    lower: np.ndarray             # their prior box [SI]
    upper: np.ndarray
    digest: str
    record: dict[str, Any]        # how it was trained

    def save(self, path: str | os.PathLike) -> Path:
        """Write the proposal as one ``.npz`` file (atomically)."""
        from recon.io import atomic_path

        arrays: dict[str, np.ndarray] = {}
        for i, (w, b) in enumerate(self.network.layers):
            arrays[f"w{i}"], arrays[f"b{i}"] = w, b
        arrays.update(x_mean=self.network.x_mean, x_sd=self.network.x_sd,
                      ood_mean=self.ood.mean, ood_sd=self.ood.sd,
                      ood_components=self.ood.components, ood_scales=self.ood.scales,
                      lower=self.lower, upper=self.upper)
        meta = {"summary": self.summary.to_dict(), "names": list(self.names),
                "digest": self.digest, "record": self.record,
                "ood": {"d_limit": self.ood.d_limit, "r_limit": self.ood.r_limit,
                        "quantile": self.ood.quantile},
                "layers": len(self.network.layers), "summary_version": SUMMARY_VERSION}
        arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), np.uint8)
        path = Path(path)
        with atomic_path(path) as tmp:
            with open(tmp, "wb") as fh:
                np.savez_compressed(fh, **arrays)
        return path

    @classmethod
    def load(cls, path: str | os.PathLike) -> "Proposal":
        """Read a proposal written by :meth:`save`; an :class:`InputError` naming the file
        when it is not one."""
        try:
            with np.load(path) as f:
                meta = json.loads(bytes(f["meta"]).decode())
                layers = [(f[f"w{i}"], f[f"b{i}"]) for i in range(meta["layers"])]
                net = Network(layers, f["x_mean"], f["x_sd"])
                o = meta["ood"]
                ood = OutOfDistribution(f["ood_mean"], f["ood_sd"], f["ood_components"],
                                        f["ood_scales"], o["d_limit"], o["r_limit"],
                                        o["quantile"])
                lower, upper = np.array(f["lower"]), np.array(f["upper"])
        except (OSError, KeyError, ValueError) as exc:
            raise InputError(f"not a readable proposal file ({type(exc).__name__})",
                             source=str(path)) from None
        return cls(Summary.from_dict(meta["summary"]), net, ood, tuple(meta["names"]), lower,
                   upper, meta["digest"], meta["record"])

    def draws(self, features: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        """The network's mean and ``n - 1`` draws from its Gaussian, ``(n, len(names))``
        [SI], inside the prior box."""
        mu, sd = self.network.predict(features[None, :])
        u = np.vstack([mu, mu + sd * rng.standard_normal((max(0, n - 1), mu.shape[1]))])
        u = np.clip(u, 0.0, 1.0)
        return self.lower + u * (self.upper - self.lower)


def _forward_names(space, unit: DockingUnit) -> list[str]:
    return [n for n in space.free_names if n in unit.parameters]


def _canonical(obj: Any) -> Any:
    """A JSON-able form of a unit's scenario (dataclasses, arrays, numbers)."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return _canonical(dataclasses.asdict(obj))
    if isinstance(obj, Mapping):
        return {str(k): _canonical(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_canonical(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, np.generic):
        return obj.item()
    return obj


def digest(unit: DockingUnit, scenario: Any, space, observation, summary: Summary) -> str:
    """SHA-256 of what a proposal depends on: the unit, the scenario's values, the forward
    parameters' priors (kind and box) and fixed values, the fitted channels and the summary's
    layout. Not the sensor noise levels (a record may estimate its own; the proposal only
    places the search's starts) nor the clock offset's prior (the summary is anchored on the
    record's first contact edge), so one proposal serves a unit's cut and realistic-span
    records alike."""
    names = _forward_names(space, unit)
    priors = {p.name: {"kind": p.prior.kind, "lower": p.prior.lower, "upper": p.prior.upper,
                       "a": p.prior.a, "b": p.prior.b} for p in space.free if p.name in names}
    fixed = {p.name: p.value for p in space.parameters if p.fixed and p.name in unit.parameters}
    spec = summary.to_dict()
    spec.pop("sigma")
    doc = {"unit": unit.name, "scenario": _canonical(scenario), "priors": priors,
           "fixed": fixed, "channels": list(observation.names), "summary": spec,
           "version": SUMMARY_VERSION}
    return hashlib.sha256(json.dumps(doc, sort_keys=True, default=str).encode()).hexdigest()


def cache_dir() -> Path:
    """Where trained proposals are kept: ``$DOCKRECON_CACHE/proposals``, else
    ``$XDG_CACHE_HOME/dockrecon/proposals``, else ``~/.cache/dockrecon/proposals``."""
    root = os.environ.get(CACHE_ENV)
    if root:
        return Path(root) / "proposals"
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "dockrecon" / "proposals"


@functools.lru_cache(maxsize=8)
def _load_once(path: str, mtime_ns: int, size: int) -> Proposal:
    return Proposal.load(path)


def load_proposal(path: str | os.PathLike) -> Proposal:
    """:meth:`Proposal.load`, read once per file version in a process: a campaign's flights
    of one scenario share the proposal (the file's modification time and size are part of
    the key, so a retrained file is read again). Proposals are not modified after loading."""
    try:
        st = os.stat(path)
    except OSError:
        return Proposal.load(path)  # the error names the file
    return _load_once(str(Path(path).resolve()), st.st_mtime_ns, st.st_size)


def shipped_dir() -> Path:
    """The proposals shipped with the package, trained for the shipped presets and run
    configurations (``make proposals``; read-only, looked in after the user's cache)."""
    return SHIPPED_DIR


def find_proposal(key: str) -> tuple[Proposal | None, str | None]:
    """The proposal of digest ``key`` and where it was found: the user's cache
    (:func:`cache_dir`, so a user's own training of the same scenario and priors takes
    precedence), else the package's shipped proposals (:func:`shipped_dir`);
    ``(None, None)`` when neither holds one."""
    for where, root in (("cache", cache_dir()), ("shipped", shipped_dir())):
        path = root / f"{key}.npz"
        if path.is_file():
            prop = load_proposal(path)
            if prop.digest == key:
                return prop, where
    return None, None


def resolve_proposal(choice: str, unit: DockingUnit, scenario: Any, space, observation
                     ) -> tuple[Proposal | None, dict[str, Any]]:
    """The proposal a run uses (``[optimizer] proposal``, module docstring) and what was
    decided: ``(proposal or None, {"choice", "digest", "reason"})``. A named file that is
    not a proposal, or was trained for another scenario or priors, is refused naming the key.
    """
    summary = Summary.for_flight(unit, observation)
    key = digest(unit, scenario, space, observation, summary)
    info: dict[str, Any] = {"choice": choice, "digest": key[:16]}
    if choice == "off":
        info["reason"] = "off in the run configuration"
        return None, info
    if choice == "auto":
        prop, where = find_proposal(key)
        if prop is None:
            info["reason"] = (f"none trained for this scenario and priors in {cache_dir()} "
                              "or shipped with the package (dockrecon train)")
        else:
            info["source"] = where
        return prop, info
    try:
        prop = load_proposal(choice)
    except InputError as exc:
        raise InputError(f"{exc.what}: {choice}", key="optimizer.proposal") from None
    if prop.digest != key:
        raise InputError(f"{choice} was trained for another scenario, priors or channels "
                         f"(digest {prop.digest[:16]}, this run {key[:16]})",
                         key="optimizer.proposal")
    return prop, info


def training_observation(unit: DockingUnit, observation_table: Mapping[str, Any] | None
                         ) -> Mapping[str, Any]:
    """The ``[observation]`` table a proposal is trained with: the run's, each ``"auto"``
    noise level (which a record would estimate) replaced by the unit's own sensor model
    (:attr:`models.unit.DockingUnit.sensor_suite`); without a table, the unit's fitted
    channels with its sensor model's noise."""
    sensors = ({s.channel: s for s in unit.sensor_suite.sensors}
               if unit.sensor_suite is not None else {})

    def level(name: str, key: str) -> float:
        s = sensors.get(name)
        if s is None:
            raise InputError('"auto" needs a record or the unit\'s sensor model, and the '
                             f"{unit.title} has none for this channel",
                             key=f"observation.channels.{name}.{key}")
        return float(s.sigma if key == "sigma" else s.quantum)

    if observation_table is None:
        chans = {c: {"sigma": level(c, "sigma")} for c in unit.fitted_channels}
        for c in chans:
            if not unit.channels[c].binary and level(c, "quantum") > 0:
                chans[c]["quantum"] = level(c, "quantum")
        return {"channels": chans}
    table = {k: v for k, v in observation_table.items() if k != "channels"}
    chans = {}
    for c, spec in dict(observation_table.get("channels", {})).items():
        spec = dict(spec)
        for k in ("sigma", "quantum"):
            if spec.get(k) == "auto":
                spec[k] = level(c, k)
        chans[c] = spec
    table["channels"] = chans
    return table


# --------------------------------------------------------------------------------------------
# training
# --------------------------------------------------------------------------------------------
def _prior_box(space, names: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """The lower and upper prior bounds of ``names`` (the box the targets are scaled to)."""
    return (np.array([space[n_].prior.lower for n_ in names]),
            np.array([space[n_].prior.upper for n_ in names]))


def simulate_bank(unit: DockingUnit, scenario: Any, space, summary: Summary, n: int,
                  rng: np.random.Generator, *, rate: float = 100.0, chunk: int = 256,
                  progress: Callable[[int, int], None] | None = None
                  ) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    """Simulated flights over the priors of ``space``: ``(features (m, size), targets
    (m, n_forward) in the prior box [0, 1], info)``, the ``m <= n`` draws that came into
    contact and ran through the summary's window (the others are counted in ``info``).

    Each draw is simulated from the start plane to ``post`` + 0.5 s after its first contact
    (a pilot batch of 64 draws gives the longest approach per closing speed, so the
    batch needs no fixed long duration)."""
    names = _forward_names(space, unit)
    fwd_all = [n_ for n_ in space.names if n_ in unit.parameters]
    cols = [space.names.index(n_) for n_ in fwd_all]
    flag_events = dict((*unit.flag_events, *unit.clock_events))
    contact_col = unit.event_column(flag_events[unit.contact_flag])
    flag_cols = {f: unit.event_column(flag_events[f]) for f in summary.flags}
    channels = (*summary.continuous, *summary.rates)
    runner = unit.batch(scenario, fwd_all, channels, rate=rate, duration=30.0,
                        t_pre=summary.rate_window)
    v_col = fwd_all.index("rel_vel_x") if "rel_vel_x" in fwd_all else None

    def run(full: np.ndarray, t_end: np.ndarray):
        out, ev, status = runner.evaluate(full[:, cols], t_end)
        return out, ev, status

    # pilot: the approach time per unit closing speed
    pilot = space.full(space.sample_prior(64, rng))
    _, ev, st = run(pilot, np.full(64, 30.0))
    ok = (st == 0) & np.isfinite(ev[:, contact_col])
    if ok.sum() < 8:
        raise InputError("fewer than 8 of 64 prior draws come into contact within 30 s: the "
                         "priors are not a docking envelope", key="parameters")
    if v_col is not None:
        reach = float(np.max(ev[ok, contact_col] * np.abs(pilot[ok][:, cols][:, v_col])))
    else:
        reach = float(np.max(ev[ok, contact_col]))
    feats, targets = [], []
    counts = {"drawn": 0, "no_contact": 0, "failed": 0, "short": 0}
    lo, hi = _prior_box(space, names)
    idx = [space.free_names.index(n_) for n_ in names]
    done = 0
    while done < n:
        k = min(chunk, n - done)
        x = space.sample_prior(k, rng)
        full = space.full(x)
        if v_col is not None:
            v = np.maximum(np.abs(full[:, cols][:, v_col]), 1e-3)
            t_end = np.minimum(1.3 * reach / v + summary.post + 0.5, 30.0)
        else:
            t_end = np.full(k, 1.3 * reach + summary.post + 0.5)
        out, ev, st = run(full, t_end)
        counts["drawn"] += k
        good = st == 0
        counts["failed"] += int((~good).sum())
        contact = ev[:, contact_col]
        has = good & np.isfinite(contact)
        counts["no_contact"] += int((good & ~np.isfinite(contact)).sum())
        chans = {c: out[:, :, i] for i, c in enumerate(channels)}
        f = summary.of_simulation(np.asarray(runner.t, float), chans,
                                  np.where(has, contact, 0.0),
                                  {fl: ev[:, c] for fl, c in flag_cols.items()}, rng)
        keep = has & np.all(np.isfinite(f), axis=1)
        counts["short"] += int((has & ~keep).sum())
        feats.append(f[keep])
        targets.append((x[keep][:, idx] - lo) / (hi - lo))
        done += k
        if progress is not None:
            progress(done, n)
    info = {**counts, "kept": int(sum(a.shape[0] for a in feats)), "rate": rate,
            "approach_reach": reach}
    return np.vstack(feats), np.vstack(targets), info


def train(unit: DockingUnit, scenario: Any, space,
          observation, *, flights: int = 20000, seed: int = 0, epochs: int = 200,
          hidden: Sequence[int] = (256, 256),
          progress: Callable[[str, int, int], None] | None = None) -> Proposal:
    """Train the proposal of a scenario and run configuration (module docstring):
    ``flights`` simulated flights over the priors (:func:`simulate_bank`), the network on
    them, the out-of-distribution check on their summaries. ``progress(stage, done,
    total)`` gets ``"simulate"`` and ``"train"``."""
    summary = Summary.for_flight(unit, observation)
    names = _forward_names(space, unit)
    if not names:
        raise InputError("no free forward parameter to learn", key="parameters")
    rng = np.random.default_rng(seed)
    x, y, info = simulate_bank(
        unit, scenario, space, summary, flights, rng,
        progress=(lambda d, t: progress("simulate", d, t)) if progress else None)
    if x.shape[0] < 200:
        raise InputError(f"only {x.shape[0]} of {flights} simulated flights came into contact "
                         "and covered the summary's window: too few to learn from",
                         key="parameters")
    net, record = Network.fit(
        x, y, hidden=hidden, epochs=epochs, seed=seed,
        progress=(lambda e, t, loss: progress("train", e, t)) if progress else None)
    ood = OutOfDistribution.fit(x)
    # how far the network's mean lands from the truth, per parameter, on the held-out flights
    mu, sd = net.predict(x[-max(1, x.shape[0] // 10):])
    yv = y[-max(1, x.shape[0] // 10):]
    from identification.provenance import versions

    record.update(bank=info, flights=flights, training_seed=seed, versions=versions(),
                  rms_error=dict(zip(names, np.sqrt(np.mean((mu - yv) ** 2, axis=0)).tolist())),
                  mean_sd=dict(zip(names, np.mean(sd, axis=0).tolist())))
    key = digest(unit, scenario, space, observation, summary)
    return Proposal(summary, net, ood, tuple(names), *_prior_box(space, names), key, record)


def train_scenario(scenario: str | os.PathLike, *, config: str | os.PathLike | None = None,
                   flights: int = 20000, seed: int = 0, epochs: int = 200,
                   progress: Callable[[str, int, int], None] | None = None) -> Proposal:
    """``dockrecon train``: the proposal of a scenario TOML and a run configuration, over
    the run's priors (else the scenario's ``[envelope]``) and fitted channels (else the
    unit's), with the run's noise levels (``"auto"`` ones, and all without a table, from the
    unit's sensor model: :func:`training_observation`). Input errors name the file and key.
    """
    from recon.config import RUN_TABLES, RunConfig, envelope_parameters, load_scenario
    from recon.io import load_toml

    unit, scn, run = load_scenario(scenario)
    src = str(scenario)
    if config is not None:
        run = {**run, **load_toml(config)}
        src = str(config)
    try:
        envelope = run.pop("envelope", None)
        if "parameters" not in run:
            if envelope is None:
                raise InputError("missing table: give the fitted parameters and their priors "
                                 "(or an [envelope] table in the scenario)", key="parameters")
            run["parameters"] = envelope_parameters(envelope)
        run["observation"] = training_observation(unit, run.get("observation"))
        cfg = RunConfig.from_dict({k: v for k, v in run.items() if k in RUN_TABLES})
        for c in cfg.observation.names:
            if c not in unit.channels:
                raise InputError(f"not a channel of the {unit.title}",
                                 key=f"observation.channels.{c}")
        unknown = [n for n in cfg.space.free_names
                   if n not in unit.parameters and n != "clock_offset"]
        if unknown:
            raise InputError("a proposal learns the unit's parameters (and leaves the clock "
                             "to the record); not one of them", key=f"parameters.{unknown[0]}")
    except InputError as exc:
        raise exc.with_source(src)
    return train(unit, scn, cfg.space, cfg.observation, flights=flights, seed=seed,
                 epochs=epochs, progress=progress)


# --------------------------------------------------------------------------------------------
# at reconstruction time
# --------------------------------------------------------------------------------------------
def learned_starts(problem, unit: DockingUnit, proposal: Proposal, *, n_draws: int = 64,
                   keep: int = 3, seed: int = 0) -> tuple[np.ndarray | None, dict[str, Any]]:
    """Starts for the polish from the learned proposal (module docstring, steps 1-3):
    ``(starts (<= keep, ndim) best first, info)``, or ``(None, info)`` when the proposal
    cannot serve the record (no summary, or outside the training distribution), with the
    reason in ``info``."""
    info: dict[str, Any] = {}
    f, why = proposal.summary.of_record(problem.record)
    if f is None:
        info["reason"] = why
        return None, info
    inside, dist = proposal.ood.check(f)
    info["out_of_distribution"] = dist
    if not inside:
        info["reason"] = ("the record's summary lies outside the training set (distance "
                          f"{dist['distance']:.1f} against {dist['distance_limit']:.1f}, "
                          f"residual {dist['residual']:.1f} against {dist['residual_limit']:.1f})")
        return None, info
    rng = np.random.default_rng(seed)
    sp = problem.space
    x = np.repeat(sp.start()[None, :], n_draws, axis=0)
    cols = [problem.names.index(n) for n in proposal.names]
    x[:, cols] = proposal.draws(f, n_draws, rng)
    x = np.clip(x, sp.lower, sp.upper)
    cost, x = problem.profile_clock(x)
    ok = np.isfinite(cost)
    if not ok.any():
        info["reason"] = "the forward model failed at every learned draw"
        return None, info
    order = np.argsort(np.where(ok, cost, np.inf), kind="stable")[:keep]
    info.update(draws=int(n_draws), best_cost=float(cost[order[0]]))
    return x[order], info
