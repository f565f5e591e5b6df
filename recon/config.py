"""Scenario and run configuration of a docking reconstruction.

A scenario TOML names its docking unit (``unit = "NAME"``, :mod:`models.unit`) and holds
the unit's tables; it may also hold the run tables below, which a ``--config RUN.toml``
overrides table by table.

Run configuration (``--config RUN.toml``, or the same tables inside the scenario TOML)::

    [model]                  # which part of the record is fitted (recon.span)
    duration = "record"      # "record" (default): simulate as far as the fitted span needs;
                             #   or [s]: at most this long from the start plane
    rate = 100.0             # [Hz] output rate, 10 to 1e5 (the fit interpolates to the stamps)
    fit_after_capture = 3.0  # [s] fit the record up to its capture edge + this (optional;
                             #   default: to the record's end; see "Fit window" below)
    fit_before_contact = 2.0 # [s] fit the record from its first contact edge - this
                             #   (optional; default: from the record's start)

    [parameters.rel_vel_x]   # see recon.problem; names: the unit's parameters (its
    prior = "uniform"        # initial conditions, brake_slip_force, ...: models.unit),
    lower = 0.05             # clock_offset and <channel>_bias / _scale / _latency
    upper = 0.40

    [observation]            # see recon.observation.ObservationModel.from_dict
    [observation.channels.stroke]
    sigma = 5e-4

    [optimizer]
    starts = 4               # Latin-hypercube starts (plus the screened starts)
    screen = 512             # cross-entropy screen (screened_starts) and the starts it keeps
    keep = 3
    max_nfev = 40            # evaluations per start
    pre_nfev = 15            # optional two-phase polish: all starts pre_nfev evaluations,
    pre_keep = 2             #   the pre_keep best continue to max_nfev
    jac_step = 1e-2          # finite-difference step, fraction of the prior spread
    polish_step = 1e-3       # optional: a final polish of the best distinct end points with
                             #   this finer step (identification.engines.refine); default none
    draws = 100              # posterior draws for loads, energy and the predictive band
    importance = 2000        # --mcmc never: importance-sample the posterior with 2000 Laplace-t
                             #   proposal draws (0: plain Laplace draws)
    importance_adapt = "quadratic"  # optional: refit the proposal between rounds from a
                             #   quadratic fit of the log posterior over the draws instead of
                             #   their weighted moments (default "moments";
                             #   identification.engines.importance_samples)
    importance_max = 4000    # optional: go on sampling, a round (importance / 4 draws) at a
                             #   time, while the effective sample size is below
                             #   mcmc_below_ess, up to this many draws (default: importance)
    importance_enough = 400  # optional: end the importance sampling early, after at least
                             #   two rounds, once its effective sample size reaches this
                             #   with a trustworthy Pareto k-hat (default: never early)
    mcmc_below_ess = 100     # optional: emcee only when the importance sampling's effective
                             #   sample size is below this (--mcmc-below-ess; default: always)
    search_retries = 2       # screen again (new seed) while the best fit is implausible
                             #   (identification.engines.gof_limit); default 2
    proposal = "auto"        # the search's starts from a learned proposal (recon.amortized):
                             #   "auto" (default) when one is trained for this scenario and
                             #   priors (dockrecon train), "off": always the screen, or the
                             #   path of a proposal file (relative to this file)

    [sampler]                # see identification.engines.SamplerSettings
    walkers = 32
    moves = "de-snooker"     # emcee's differential-evolution moves (default), or "stretch"

Defaults (a reconstruction out of the box). A run with no run table at all (no ``--config``
and none in the scenario) takes the engine tables :data:`DEFAULT_RUN`. A missing
``[parameters]`` table is built from the scenario's ``[envelope]`` table, the unit's
first-contact envelope (a number fixes a parameter, ``[lower, upper]`` gives a uniform prior;
``clock_offset`` counts from the record's first contact edge; :func:`envelope_parameters`).
A missing ``[observation]`` table fits the unit's :attr:`~models.unit.DockingUnit.
fitted_channels` that the record has, with ``sigma = "auto"`` and ``quantum = "auto"``:
the noise is estimated from the record's pre-contact segment (:mod:`recon.noise`); any
channel of a stated table may say ``"auto"`` too. :func:`complete_run` does this; the
estimates are in ``result.json`` (``settings.noise``) and which tables were defaulted in
``settings.defaults``.

``rel_pos_x`` (the axial position at the start of the simulation) and ``clock_offset`` are
almost perfectly confounded (moving the start along the approach shifts every event in time),
so a run configuration fixes ``rel_pos_x`` (a convention: the start plane) and fits the clock
offset. A record's clock need not have anything to do with the start plane (flight records
start during the approach, on the vehicle's own time): ``anchor = "contact"`` in
``[parameters.clock_offset]`` gives its prior in seconds from the record's first contact edge.
The part of the record compared with the model, and how records longer than the model or
starting before it are handled, is :mod:`recon.span`'s (the fitted span is in ``result.json``
as ``settings.fit_span`` and in the report).
"""
from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from typing import Any

import numpy as np

from models.errors import InputError
from models.limits import checked_table
from models.schema import Table, keys
from models.unit import DockingUnit, get_unit, unit_names
from recon.io import load_toml
from recon.noise import resolve_auto
from recon.observation import ObservationModel
from recon.problem import parameter_space
from identification.engines import SamplerSettings
from identification.space import ParameterSpace
from recon.pipeline import ReconstructSettings
from recon.span import choose_span, first_edge

__all__ = ["RUN_TABLES", "DEFAULT_RUN", "MCMC_MODES", "RunConfig", "load_scenario",
           "scenario_document", "complete_run", "envelope_parameters", "mcmc_mode"]

#: Tables of a run configuration (stripped from a scenario TOML before the unit reads it).
RUN_TABLES = ("model", "parameters", "observation", "optimizer", "sampler")

#: The engine tables of a reconstruction run without any run table (``dockrecon reconstruct``
#: without ``--config``, and a scenario without run tables): the settings of the realistic-span
#: flights (``telemetry_samples/flights/realistic/run.toml``, whose comments give the reasons),
#: the ones the calibration study measured (docs/design/fit_window.rst: the realistic-span study).
DEFAULT_RUN: dict[str, dict[str, Any]] = {
    "model": {"duration": "record", "fit_before_contact": 3.0, "fit_after_capture": 3.0},
    "optimizer": {"starts": 0, "screen": 512, "keep": 8, "pre_nfev": 20, "pre_keep": 2,
                  "max_nfev": 100, "jac_step": 1e-2, "draws": 40, "importance": 2000,
                  "importance_adapt": "quadratic", "importance_max": 4000,
                  "importance_enough": 400,
                  "mcmc_below_ess": 100, "search_retries": 2},
    "sampler": {"walkers": 32, "ensembles": 2, "max_steps": 2000, "check_every": 100},
}
#: finite-difference step [s] of a clock offset from the envelope (the data pin the clock to
#: about 1 ms; a fraction of a 7.5-s prior spread would be 20 ms)
CLOCK_STEP = 0.005


def load_scenario(path: str | os.PathLike) -> tuple[DockingUnit, Any, dict[str, Any]]:
    """Read a scenario TOML: ``(its docking unit, the unit's scenario, the run tables found
    in it)``. Errors name the file and the key."""
    d = load_toml(path)
    run = {k: d.pop(k) for k in RUN_TABLES if k in d}
    if "envelope" in d:
        run["envelope"] = d.pop("envelope")
    try:
        if "unit" not in d:
            raise InputError("no docking unit named: add unit = \"NAME\" at the top (known: "
                             f"{', '.join(unit_names())})", key="unit")
        unit = get_unit(d["unit"])
        return unit, unit.scenario(d), run
    except InputError as exc:
        raise exc.with_source(str(path))


def scenario_document(path: str | os.PathLike) -> dict[str, Any]:
    """A scenario TOML's own tables (the unit's), without the run tables and the envelope
    that :func:`load_scenario` strips: what ``unit.scenario`` reads."""
    d = load_toml(path)
    for k in (*RUN_TABLES, "envelope"):
        d.pop(k, None)
    return d


def envelope_parameters(envelope: Mapping[str, Any], *, key: str = "envelope"
                        ) -> dict[str, Any]:
    """A ``[parameters]`` table from an ``[envelope]`` table (module docstring): a number
    fixes the parameter, ``[lower, upper]`` gives it a uniform prior [SI]; ``clock_offset``
    is anchored on the first contact edge with a :data:`CLOCK_STEP` difference step."""
    if not isinstance(envelope, Mapping) or not envelope:
        raise InputError("expected a table of parameters", key=key)
    out: dict[str, Any] = {}
    for name, v in envelope.items():
        if isinstance(v, bool):
            raise InputError("expected a number or [lower, upper]", key=f"{key}.{name}")
        if isinstance(v, (int, float)):
            out[name] = {"fixed": float(v)}
            continue
        if (not isinstance(v, (list, tuple)) or len(v) != 2
                or not all(isinstance(b, (int, float)) and not isinstance(b, bool) for b in v)
                or not v[0] < v[1]):
            raise InputError("expected a number or [lower, upper] with lower < upper",
                             key=f"{key}.{name}")
        out[name] = {"lower": float(v[0]), "upper": float(v[1])}
        if name == "clock_offset":
            out[name].update(anchor="contact", step=CLOCK_STEP)
    return out


def complete_run(run: Mapping[str, Any], unit: DockingUnit, record
                 ) -> tuple[dict[str, Any], dict[str, Any]]:
    """Fill what a run configuration leaves out (module docstring, "Defaults") and resolve
    ``"auto"`` noise from ``record``. Returns the run tables and what was filled in:
    ``{"defaults": [tables], "noise": {channel: estimate}}``."""
    run = dict(run)
    envelope = run.pop("envelope", None)
    filled: list[str] = []
    if not any(k in run for k in RUN_TABLES):
        for k, table in DEFAULT_RUN.items():
            run[k] = dict(table)
            filled.append(k)
    if "parameters" not in run:
        if envelope is None:
            raise InputError("missing table: give the fitted parameters and their priors "
                             "(or an [envelope] table in the scenario)", key="parameters")
        run["parameters"] = envelope_parameters(envelope)
        filled.append("parameters (from the envelope)")
    if "observation" not in run:
        chans = [c for c in unit.fitted_channels
                 if c in record.channels and np.isfinite(record.samples(c)[1]).any()]
        if not chans:
            raise InputError(f"missing table, and the record has none of the {unit.title}'s "
                             f"channels ({', '.join(unit.fitted_channels)})", key="observation")
        run["observation"] = {"channels": {c: {"sigma": "auto"} if unit.channels[c].binary
                                           else {"sigma": "auto", "quantum": "auto"}
                                           for c in chans}}
        filled.append("observation (sigma and quantum from the record)")
    obs, noise = resolve_auto(run["observation"], record, contact_flag=unit.contact_flag,
                              kind=lambda c: unit.channels[c].kind if c in unit.channels else None)
    run["observation"] = obs
    return run, {"defaults": filled, "noise": noise}


#: [Hz] largest forward-model output rate a run configuration may ask for
MAX_RATE = 1e5
#: [Hz] the smallest: the model's output is interpolated linearly to the record's stamps, and
#: below 10 Hz it cannot follow a docking's contact transients (a head strike lasts ~15 ms);
#: a rate far below it also makes the fitted span's end land between outputs seconds apart
MIN_RATE = 10.0
#: [s] longest simulated span or fit margin a run configuration may ask for
MAX_DURATION = 1e4

#: ``[optimizer] importance_adapt``: the importance proposal's refit rules
#: (:func:`identification.engines.importance_samples`)
IMPORTANCE_ADAPT = ("moments", "quadratic")

#: the ``[model]`` table (:mod:`models.schema`; the module docstring)
MODEL = Table("model", "Which part of the record is fitted (recon.span).", keys(f"""
duration           | number/record | s  | 'record' | (0, {MAX_DURATION!r}] | "record": simulate
| as far as the fitted span needs; or at most this long from the start plane
rate               | number        | Hz | -        | [{MIN_RATE!r}, {MAX_RATE!r}] | forward-model
| output rate (the fit interpolates to the stamps; default: the scenario's)
fit_after_capture  | number        | s  | -        | [0, {MAX_DURATION!r}]~ | fit the record up to
| its capture edge + this (default: to the record's end)
fit_before_contact | number        | s  | -        | [0, {MAX_DURATION!r}]~ | fit the record from
| its first contact edge - this (default: from the record's start)
"""), source=False)

#: the ``[optimizer]`` table (:mod:`models.schema`; the module docstring): finite but absurd
#: values (a search of 1e17 evaluations, a negative draw count) are the user's input,
#: refused with the key (:func:`models.limits.checked_table`)
OPTIMIZER = Table("optimizer", "The search, the Laplace approximation and the importance "
                  "sampling (recon.reconstruct.ReconstructSettings).", keys(f"""
starts            | integer | - | 4      | [0, 10000]    | Latin-hypercube starts (besides the
| screened ones)
screen            | integer | - | 256    | [0, 1000000]  | cross-entropy screen's evaluations
| (recon.search.screened_starts)
keep              | integer | - | 3      | [1, 10000]    | screened starts kept
max_nfev          | integer | - | -      | [1, 1000000]  | evaluations per start (default:
| the polish's own limit)
pre_nfev          | integer | - | -      | [1, 1000000]  | two-phase polish: every start this
| many evaluations first (default: one phase)
pre_keep          | integer | - | 2      | [1, 10000]    | two-phase polish: the starts that go
| on to max_nfev
jac_step          | number  | - | 0.01   | [1e-8, 1.0]   | finite-difference step, fraction of
| the prior spread
polish_step       | number  | - | -      | [1e-8, 1.0]   | a final polish of the best distinct
| end points with this finer step (default: none)
draws             | integer | - | 100    | [1, 100000]   | posterior draws for loads, energy
| and the predictive band
importance        | integer | - | 0      | [0, 10000000] | importance-sample the posterior with
| this many Laplace-t proposal draws (0: plain Laplace draws)
importance_max    | integer | - | -      | [0, 10000000] | go on sampling, a round at a time,
| while the effective sample size is below mcmc_below_ess, up to this many draws
importance_enough | number  | - | -      | [1.0, 1e9]    | end the importance sampling early
| once its effective sample size reaches this (default: never early)
mcmc_below_ess    | number  | - | -      | [1e-9, 1e9]   | emcee only when the importance
| sampling's effective sample size is below this (default: always)
search_retries    | integer | - | 2      | [0, 100]      | screen again (new seed) while the
| best fit is implausible
importance_adapt  | choice:{",".join(IMPORTANCE_ADAPT)} | - | 'moments' | - | refit the
| importance proposal between rounds from the draws' weighted moments or from a quadratic fit
| of the log posterior
proposal          | string  | - | 'auto' | -             | the search's starts from a learned
| proposal: "auto" (when one is trained for this scenario), "off", or a proposal file's path
| (relative to this file)
"""), source=False)

#: ``[optimizer]`` numbers: (whole number?, lowest, highest) of :data:`OPTIMIZER`
OPTIMIZER_KEYS: dict[str, tuple[bool, float, float]] = {
    k.name: (k.type == "integer", k.minimum, k.maximum) for k in OPTIMIZER.keys()
    if k.type in ("integer", "number")}

#: when emcee runs (``reconstruct --mcmc``, a campaign's ``mcmc`` option; ``RunConfig.from_dict``)
MCMC_MODES = ("auto", "always", "never")


def mcmc_mode(value: bool | str, *, key: str = "mcmc") -> str:
    """``value`` as one of :data:`MCMC_MODES` (True is ``"auto"``, False ``"never"``: the
    spellings of the earlier ``--no-mcmc`` flag and ``mcmc = true/false`` option)."""
    if isinstance(value, bool):
        return "auto" if value else "never"
    if value not in MCMC_MODES:
        raise InputError(f"must be one of {', '.join(map(repr, MCMC_MODES))}, got {value!r}",
                         key=key)
    return value


@dataclasses.dataclass(frozen=True)
class RunConfig:
    """A parsed run configuration (see the module docstring)."""

    space: ParameterSpace
    observation: ObservationModel
    settings: ReconstructSettings
    duration: float | str
    rate: float | None
    screen: int = 256
    keep: int = 3
    fit_after_capture: float | None = None
    fit_before_contact: float | None = None
    parameters: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    #: ``[optimizer] proposal``: "auto", "off" or a proposal file (recon.amortized)
    proposal: str = "auto"

    def space_for(self, record) -> ParameterSpace:
        """The parameter space with the priors anchored on ``record``'s events
        (``anchor = "contact"`` in a ``[parameters.NAME]`` table: its numbers count from that
        flag's first rising edge; :meth:`identification.space.ParameterSpace.from_dict`)."""
        flags = {n for spec in self.parameters.values() if isinstance(spec, Mapping)
                 for k, n in spec.items() if k == "anchor"}
        anchors = {f: first_edge(record, f) for f in flags}
        return parameter_space(self.parameters, anchors=anchors, source=record.source)

    def span_for(self, record, space: ParameterSpace, unit: DockingUnit):
        """The fitted span of ``record`` (:func:`recon.span.choose_span`; the unit names its
        contact and capture flags)."""
        return choose_span(record, space, self.observation, duration=self.duration,
                           before_contact=self.fit_before_contact,
                           after_capture=self.fit_after_capture,
                           contact_flag=unit.contact_flag, capture_flag=unit.capture_flag)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], *, walkers: int | None = None,
                  steps: int | None = None, mcmc: bool | str = True,
                  starts: int | None = None, max_nfev: int | None = None,
                  mcmc_below_ess: float | None = None) -> "RunConfig":
        """The run configuration of the tables ``d``, with the command line's overrides.

        ``mcmc`` (:data:`MCMC_MODES`): ``"auto"`` (or True) leaves emcee to the
        configuration's rule (``[optimizer] mcmc_below_ess`` and the importance weights'
        k-hat; without ``mcmc_below_ess``, emcee always runs); ``"always"`` runs emcee
        whatever the importance sampling gave; ``"never"`` (or False) does not run it."""
        mode = mcmc_mode(mcmc)
        for k in d:
            if k not in RUN_TABLES:
                raise InputError(f"unknown table (allowed: {', '.join(RUN_TABLES)})", key=k)
        if "parameters" not in d:
            raise InputError("missing table: give the fitted parameters and their priors",
                             key="parameters")
        if "observation" not in d:
            raise InputError("missing table: give the fitted channels and their noise",
                             key="observation")
        model = dict(d.get("model", {}))
        allowed = tuple(e.name for e in MODEL.entries)
        for k in model:
            if k not in allowed:
                raise InputError(f"unknown key (allowed: {', '.join(allowed)})",
                                 key=f"model.{k}")
        seconds = {}
        for k in ("fit_after_capture", "fit_before_contact"):
            v = model.get(k)
            if v is not None:
                if (isinstance(v, bool) or not isinstance(v, (int, float))
                        or not 0 <= v <= MAX_DURATION):
                    raise InputError(f"must be a number of seconds in [0, {MAX_DURATION:g}], "
                                     f"got {v!r}", key=f"model.{k}")
                v = float(v)
            seconds[k] = v
        duration = model.get("duration", MODEL["duration"].default)
        if duration != "record":
            if (isinstance(duration, bool) or not isinstance(duration, (int, float))
                    or not 0 < duration <= MAX_DURATION):
                raise InputError(f'must be "record" or a number of seconds in (0, '
                                 f'{MAX_DURATION:g}], got {duration!r}', key="model.duration")
            duration = float(duration)
        rate = model.get("rate")
        if rate is not None and (isinstance(rate, bool) or not isinstance(rate, (int, float))
                                 or not MIN_RATE <= rate <= MAX_RATE):
            raise InputError(f"must be a number of samples per second in [{MIN_RATE:g}, "
                             f"{MAX_RATE:g}], got {rate!r}", key="model.rate")
        if starts is not None:
            opt_in = {**d.get("optimizer", {}), "starts": starts}
        else:
            opt_in = dict(d.get("optimizer", {}))
        if max_nfev is not None:
            opt_in["max_nfev"] = max_nfev
        if mcmc_below_ess is not None:
            opt_in["mcmc_below_ess"] = mcmc_below_ess
        proposal = opt_in.pop("proposal", OPTIMIZER["proposal"].default)
        if not isinstance(proposal, str) or not proposal:
            raise InputError(f'must be "auto", "off" or a proposal file\'s path, got '
                             f"{proposal!r}", key="optimizer.proposal")
        adapt = opt_in.pop("importance_adapt", OPTIMIZER["importance_adapt"].default)
        if adapt not in IMPORTANCE_ADAPT:
            raise InputError(f"must be one of {', '.join(map(repr, IMPORTANCE_ADAPT))}, got "
                             f"{adapt!r}", key="optimizer.importance_adapt")
        opt = checked_table(opt_in, OPTIMIZER_KEYS, "optimizer",
                            others=tuple(k.name for k in OPTIMIZER.keys()
                                         if k.name not in OPTIMIZER_KEYS))
        opt = {**{k: OPTIMIZER[k].default for k in OPTIMIZER_KEYS
                  if OPTIMIZER[k].default is not None}, **opt}
        below = opt.get("mcmc_below_ess")
        if below is not None and int(opt["importance"]) <= 0:
            raise InputError("needs importance sampling: set optimizer.importance > 0",
                             key="optimizer.mcmc_below_ess")
        if opt.get("importance_enough") is not None and int(opt["importance"]) <= 0:
            raise InputError("needs importance sampling: set optimizer.importance > 0",
                             key="optimizer.importance_enough")
        imax = opt.get("importance_max")
        if imax is not None:
            if below is None:
                raise InputError("needs optimizer.mcmc_below_ess (the effective sample size "
                                 "the extra rounds aim at)", key="optimizer.importance_max")
            n_is = int(opt["importance"])
            if imax < n_is:
                raise InputError(f"must be at least optimizer.importance ({n_is}), got {imax}",
                                 key="optimizer.importance_max")
        retries = opt["search_retries"]
        sampler = dict(d.get("sampler", {}))
        if walkers is not None:
            sampler["walkers"] = walkers
        if steps is not None:
            sampler["max_steps"] = steps
        settings = ReconstructSettings(
            starts=int(opt["starts"]), max_nfev=opt.get("max_nfev"),
            mcmc=mode != "never", mcmc_below_ess=None if mode == "always" else below,
            search_retries=retries,
            pre_nfev=opt.get("pre_nfev"), pre_keep=int(opt["pre_keep"]),
            importance=int(opt["importance"]),
            sampler=SamplerSettings.from_dict(sampler), draws=int(opt["draws"]),
            # Laplace Jacobian step, fraction of the prior spread. The probe-cone residuals are
            # piecewise smooth (contact, latch and capture events snap to the output grid), so a
            # 1e-4 central difference measures switching jitter, not the likelihood's curvature:
            # on the nominal flight it gives 95 % intervals that miss the truth by 4.5 sd in the
            # lateral offset. A 1e-2 secant (about 10 posterior sd of the offset) is stable to a
            # factor 3 change in step (1e-3 ... 1e-2 agree within 30 % except roll).
            # The least-squares polish uses the same step: with 1e-4 it stopped on the jitter
            # (nominal flight: cost 382.6 where the cost falls almost monotonically to 347 along
            # the line to the truth); with 1e-2 all four starts reach 347-354 in 26-45
            # evaluations.
            jac_step=float(opt["jac_step"]),
            polish_step=(None if opt.get("polish_step") is None
                         else float(opt["polish_step"])),
            importance_adapt=adapt,
            importance_max=None if imax is None else int(imax),
            importance_enough=(None if opt.get("importance_enough") is None
                               else float(opt["importance_enough"])))
        return cls(parameter_space(d["parameters"]),
                   ObservationModel.from_dict(d["observation"]), settings,
                   duration, None if rate is None else float(rate),
                   int(opt["screen"]), int(opt["keep"]),
                   seconds["fit_after_capture"], seconds["fit_before_contact"],
                   dict(d["parameters"]), proposal)
