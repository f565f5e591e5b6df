"""The docking-unit interface and the registry of units by name.

A docking unit is a plug-in: the reconstruction (:mod:`recon`) never names one. A scenario
TOML names its unit (``unit = "probe_cone"``); :func:`get_unit` maps the name to the
implementation, which

* reads a scenario table into its scenario object (:meth:`DockingUnit.scenario`);
* builds a batch runner of its compiled kernel (:meth:`DockingUnit.batch`): many parameter
  vectors in parallel, each row to its own end time, with the free-flight extension before
  the start plane;
* names what it produces, once: its channels with SI units and kinds
  (:class:`Channel`: sensor channels a flight records, continuous, binary or body rates, and
  the reconstructed histories, loads and energy), its parameters, its events and which
  telemetry flag marks which event;
* derives loads and energy from histories (:meth:`DockingUnit.loads`,
  :meth:`DockingUnit.energy`);
* gives an analytic first guess of a reconstruction from its telemetry
  (:meth:`DockingUnit.first_guess`).

Units are registered by module path and imported on first use, so reading a scenario loads
only its own unit.
"""
from __future__ import annotations

import abc
import dataclasses
import importlib
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from models.errors import InputError
from models.schema import CONTACT, INITIAL, THRUST
from models.limits import check_keys, number, vector

__all__ = ["IC_NAMES", "InitialConditions", "ContactLaw", "Thrust", "Channel", "Sensor",
           "SensorSuite", "vehicle_channels", "ledger_channels", "BatchRunner", "DockingUnit",
           "register_unit", "get_unit", "unit_names", "all_channels", "all_parameters",
           "CHANNEL_KINDS", "row_peak",
           "row_last", "calibration_guess"]

#: kinds of channel: a continuous sensor or history, a 0/1 flag (compared through its
#: switching times), a body angular rate (a gyro)
CHANNEL_KINDS = ("continuous", "binary", "rate")


# --------------------------------------------------------------------------------------------
# what every unit's scenario shares: the initial conditions, the contact law, the thrust
#: The twelve initial conditions of every docking unit: the relative state of the active unit
#: frame in the passive unit frame at the start plane (:class:`InitialConditions`)
IC_NAMES = ("rel_pos_x", "rel_pos_y", "rel_pos_z", "rel_vel_x", "rel_vel_y", "rel_vel_z",
            "rel_roll", "rel_pitch", "rel_yaw", "rel_rate_x", "rel_rate_y", "rel_rate_z")


@dataclass(frozen=True)
class InitialConditions:
    """Relative state of the active unit frame (AU) in the passive unit frame (PU) at t = 0.

    ``rel_pos_*`` [m]: AU origin in PU axes. ``rel_vel_*`` [m/s]: inertial velocity of the AU
    origin minus that of the PU origin, in PU axes. ``rel_roll``, ``rel_pitch``, ``rel_yaw``
    [rad]: ``A_PAU = R_x(roll) R_y(pitch) R_z(yaw)`` (PU -> AU components). ``rel_rate_*``
    [rad/s]: angular velocity of AU minus that of PU, in PU axes.
    """

    rel_pos_x: float
    rel_pos_y: float
    rel_pos_z: float
    rel_vel_x: float
    rel_vel_y: float
    rel_vel_z: float
    rel_roll: float
    rel_pitch: float
    rel_yaw: float
    rel_rate_x: float
    rel_rate_y: float
    rel_rate_z: float

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], prefix: str = "initial.") -> "InitialConditions":
        """All twelve names required, in SI; unknown keys are errors."""
        check_keys(d, INITIAL.names(), prefix)
        return cls(**{n: number(d, n, prefix) for n in IC_NAMES})

    def as_array(self) -> np.ndarray:
        """The twelve values in :data:`IC_NAMES` order."""
        return np.array([getattr(self, n) for n in IC_NAMES], dtype=float)

    @classmethod
    def from_array(cls, a) -> "InitialConditions":
        a = np.asarray(a, dtype=float).reshape(-1)
        if a.size != 12:
            raise InputError("expected 12 initial conditions")
        return cls(**dict(zip(IC_NAMES, map(float, a))))

    def mirrored_y(self) -> "InitialConditions":
        """Mirror image in the plane y = 0 of PU: polar vectors flip y, axial vectors (angles,
        rates) flip x and z."""
        a = self.as_array()
        sign = np.array([1, -1, 1, 1, -1, 1, -1, 1, -1, -1, 1, -1], dtype=float)
        return InitialConditions.from_array(a * sign)


@dataclass(frozen=True)
class ContactLaw:
    """Penalty law (digest §5): ``stiffness`` k_S [N/m], ``damping`` c_D [N s/m] (or
    [N s/m^2] for Hunt-Crossley), ``friction`` k_Fr [-], ``friction_velocity`` v_eps [m/s],
    ``model`` ("linear" = the paper, or "hunt-crossley"), ``max_penetration`` [m]."""

    stiffness: float
    damping: float
    friction: float
    friction_velocity: float
    max_penetration: float
    model: str = "linear"

    def law(self):
        """The :class:`models.contact.force.ContactLaw` of the contact library."""
        from models.contact.force import ContactLaw as _Law

        return _Law(stiffness=self.stiffness, damping=self.damping, friction=self.friction,
                    slip_regularization=self.friction_velocity, model=self.model)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "ContactLaw":
        p = "contact."
        check_keys(d, CONTACT.names(), p)
        model = d.get("model", "linear")
        if model not in ("linear", "hunt-crossley"):
            raise InputError("expected 'linear' or 'hunt-crossley'", key=p + "model")
        return cls(stiffness=number(d, "stiffness", p, positive=True),
                   damping=number(d, "damping", p, nonneg=True),
                   friction=number(d, "friction", p, nonneg=True),
                   friction_velocity=number(d, "friction_velocity", p, 1e-3, positive=True),
                   max_penetration=number(d, "max_penetration", p, positive=True),
                   model=model)


@dataclass(frozen=True)
class Thrust:
    """Constant thrust of the active vehicle, body axes ``force`` [N], on ``[start, stop)`` [s]."""

    force: np.ndarray = field(default_factory=lambda: np.zeros(3))
    start: float = 0.0
    stop: float = 0.0

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Thrust":
        p = "thrust."
        check_keys(d, THRUST.names(), p)
        return cls(force=vector(d, "force", p, (3,), np.zeros(3)),
                   start=number(d, "start", p, 0.0), stop=number(d, "stop", p, 0.0))


# --------------------------------------------------------------------------------------------
# channels, sensors and the unit interface
@dataclass(frozen=True)
class Channel:
    """One output channel of a unit.

    Attributes
    ----------
    name
        Channel name (a telemetry column and a simulated channel).
    unit
        SI unit as pint reads it (``""`` for a 0/1 flag or a dimensionless quantity).
    kind
        ``"continuous"``, ``"binary"`` or ``"rate"`` (:data:`CHANNEL_KINDS`).
    description
        What it is, in words.
    sensor
        True when flight telemetry records it; False for reconstructed quantities (relative
        state, loads, energies).
    range
        Physical range ``(lower, upper)`` [SI] a value can have; None when unbounded.
    """

    name: str
    unit: str
    kind: str
    description: str
    sensor: bool = False
    range: tuple[float, float] | None = None

    def __post_init__(self) -> None:
        if self.kind not in CHANNEL_KINDS:
            raise ValueError(f"channel {self.name}: kind {self.kind!r} not in {CHANNEL_KINDS}")

    @property
    def binary(self) -> bool:
        return self.kind == "binary"

    @property
    def file_unit(self) -> str:
        """The unit written into files (``"0/1"`` for a flag)."""
        return "0/1" if self.binary else self.unit



@dataclass(frozen=True)
class Sensor:
    """One channel of a unit's flight recorder: its sensor model and how it is recorded.

    Attributes
    ----------
    channel
        The unit's channel it records (:class:`Channel`).
    sigma
        White-noise standard deviation [SI]; for a 0/1 flag, the standard deviation of the
        time at which a switch is seen [s].
    quantum
        Quantization step [SI] (0: none).
    every
        Recorder frames between two of its samples [-].
    file_unit
        The unit it is written in (None: SI; a flag is written as ``0/1``).
    dropout
        Whether it drops out with the mechanism channels.
    """

    channel: str
    sigma: float
    quantum: float = 0.0
    every: int = 1
    file_unit: str | None = None
    dropout: bool = False


@dataclass(frozen=True)
class SensorSuite:
    """A unit's flight recorder, as data: what :mod:`recon.recording` records a simulated
    flight with (synthetic samples and calibration studies).

    Attributes
    ----------
    sensors
        Every recorded channel, in the column order of the written file.
    dt_frame
        Recorder frame [s]: every channel is sampled on multiples of it (the gyros of a
        realistic record excepted).
    gyro_period, gyro_phase
        A realistic record's body rates (channels of kind ``"rate"``) are sampled on a time
        base of their own: every ``gyro_period`` [s], ``gyro_phase`` [s] after the recorder's
        frame ticks.
    cut_start
        Where a record cut to the model window starts: ``"record"``, at telemetry time 0
        (with a positive clock offset, before the start plane, where the model's free flight
        covers it); ``"start_plane"``, at the start plane (telemetry time = clock offset).
    """

    sensors: tuple[Sensor, ...]
    dt_frame: float = 0.005
    gyro_period: float = 0.1
    gyro_phase: float = 0.0137
    cut_start: str = "record"

    def __post_init__(self) -> None:
        if self.cut_start not in ("record", "start_plane"):
            raise ValueError(f"cut_start must be 'record' or 'start_plane', not "
                             f"{self.cut_start!r}")

    @property
    def channels(self) -> tuple[str, ...]:
        """The recorded channels, in file order."""
        return tuple(s.channel for s in self.sensors)


def vehicle_channels(add) -> None:
    """Add the channels every docking unit shares through ``add(name, unit, kind, text,
    sensor=False, rng=None)``: both vehicles' body rates (telemetered gyros), the relative
    state of the active unit in the passive unit frame, and the interface force and moment
    on the passive unit (about its origin)."""
    for body in ("active", "passive"):
        for a in "xyz":
            add(f"{body}_rate_{a}", "rad/s", "rate", f"{body} vehicle body rate about {a}",
                True, (-1.0, 1.0))
    for a in "xyz":
        add(f"rel_pos_{a}", "m", "continuous", f"active unit origin in the passive unit "
            f"frame, {a}")
        add(f"rel_vel_{a}", "m/s", "continuous", f"relative velocity, {a}")
    for a in ("roll", "pitch", "yaw"):
        add(f"rel_{a}", "rad", "continuous", f"relative attitude, {a}")
    for a in "xyz":
        add(f"rel_rate_{a}", "rad/s", "continuous", f"relative angular rate, {a}")
    for a in "xyz":
        add(f"interface_force_{a}", "N", "continuous", f"interface force on the passive "
            f"unit, {a}")
    for a in "xyz":
        add(f"interface_moment_{a}", "N m", "continuous", f"interface moment about the "
            f"passive unit origin, {a}")


def ledger_channels(add, energies, works=()) -> None:
    """Add the energy-ledger and momentum channels through ``add``: ``energy_<name>`` [J] for
    each ``(name, text)`` of ``energies`` (the unit's own terms), ``thrust_work`` and the
    unit's other external works ``works`` (``(name, text)``) [J], then the total linear
    [kg m/s] and angular [kg m^2/s] momenta (diagnostics of conservation)."""
    for e, text in energies:
        add(f"energy_{e}", "J", "continuous", text)
    add("thrust_work", "J", "continuous", "work done by the thrust")
    for w, text in works:
        add(w, "J", "continuous", text)
    for a in "xyz":
        add(f"momentum_{a}", "kg m/s", "continuous", f"total linear momentum, {a}")
    for a in "xyz":
        add(f"angular_momentum_{a}", "kg m^2/s", "continuous", f"total angular momentum, {a}")


def row_peak(x: np.ndarray) -> np.ndarray:
    """Largest value of each row of ``x`` (n, n_t), NaN for an all-NaN (failed) row."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmax(x, axis=1)


def row_last(x: np.ndarray) -> np.ndarray:
    """Last finite value of each row of ``x`` (n, n_t); NaN for an all-NaN row."""
    fin = np.isfinite(x)
    k = x.shape[1] - 1 - np.argmax(fin[:, ::-1], axis=1)
    return np.where(fin.any(axis=1), x[np.arange(x.shape[0]), k], np.nan)


def calibration_guess(problem: Any, parameter: str, channel: str, *, sign: float = 1.0,
                      n_cal: int = 9) -> np.ndarray:
    """A first guess of one parameter in the post-flight tradition (digest section 11): the
    peak of a mechanism channel in the record, read through a calibration curve.

    The curve (the peak of ``sign * channel`` against ``parameter``, every other free
    parameter at its start value) is made by the forward model itself in one batch of
    ``n_cal`` runs over the prior's range of ``parameter``, standing in for the ground-test
    calibration of the absorber that Syromiatnikov's method uses; the record's peak of
    ``sign * channel`` (over the fitted span) is interpolated on it. ``problem`` is a
    :class:`recon.problem.ReconstructionProblem`, used through its public methods.

    Returns the start values with ``parameter`` replaced (unchanged when it is not free, the
    record has no such channel or fewer than two calibration runs give a peak).
    """
    sp = problem.space
    x = sp.start()
    names = sp.free_names
    tel = problem.telemetry
    if parameter not in names or channel not in tel.channels:
        return x
    j = names.index(parameter)
    v = np.linspace(sp.lower[j], sp.upper[j], n_cal)
    batch = np.repeat(x[None, :], n_cal, axis=0)
    batch[:, j] = v
    sim, _ = problem.simulate(batch, any_clock=True)
    if channel not in sim.channels:
        return x
    peak = row_peak(sign * sim.channels[channel])
    _, y = tel.samples(channel)
    ok = np.isfinite(peak)
    if ok.sum() >= 2 and y.size:
        order = np.argsort(peak[ok])
        x[j] = float(np.interp(float(np.nanmax(sign * y)), peak[ok][order], v[ok][order]))
    return x


class BatchRunner(Protocol):
    """A unit's compiled kernel over many parameter vectors of one scenario."""

    parameters: tuple[str, ...]
    channels: tuple[str, ...]
    t: np.ndarray

    @property
    def duration(self) -> float: ...

    def evaluate(self, theta: np.ndarray, t_end: np.ndarray | None = None
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(out (n, n_t, n_channels), events (n, n_events), status (n,))``."""

    def derive(self, channels: Sequence[str] | None = None, *, t_pre: float | None = None
               ) -> "BatchRunner": ...

    def status_text(self, status: int) -> str: ...


class DockingUnit(abc.ABC):
    """Base class of a docking unit (module docstring).

    Class attributes a unit sets: :attr:`name`, :attr:`title`, :attr:`channels`,
    :attr:`parameters`, :attr:`initial_conditions`, :attr:`events`, :attr:`clock_events`,
    :attr:`flag_events`, :attr:`fitted_channels`, :attr:`trajectory_channels`,
    :attr:`load_channels`, :attr:`energy_channels`.
    """

    #: registry name (the scenario's ``unit`` key)
    name: str = ""
    #: what it is, for reports
    title: str = ""
    #: whether :meth:`simulate` takes ``trace=`` (:class:`models.trace.TraceSettings`)
    supports_trace: bool = False
    #: every output channel, by name
    channels: Mapping[str, Channel] = {}
    #: forward-model parameters a reconstruction may fit, name -> SI unit (the initial
    #: conditions first)
    parameters: Mapping[str, str] = {}
    #: the relative state at the start of the simulation
    initial_conditions: tuple[str, ...] = ()
    #: event names, in the column order of the runner's event array
    events: tuple[str, ...] = ()
    #: ``(telemetry flag, event)``: the flag's first rising edge marks the event; in order of
    #: preference for aligning a record's clock with the simulation
    clock_events: tuple[tuple[str, str], ...] = ()
    #: ``(flag, event)``: binary channels whose first rising edge *is* the event, which the
    #: kernel times at its integration step; a reconstruction takes that edge from the event
    #: time, not from the output samples around it (:attr:`recon.observation.Simulated.
    #: first_rise`). Only flags that rise exactly when their event is recorded belong here
    #: (tests/models/test_flag_events.py checks it on every unit that lists them).
    flag_events: tuple[tuple[str, str], ...] = ()
    #: the flags of first contact and of capture (what a fitted span counts from)
    contact_flag: str = "contact"
    capture_flag: str = "capture"
    #: the sensor channels a reconstruction fits when no run configuration names them (those
    #: present in the record; the others, such as the contact flag, only anchor the clock)
    fitted_channels: tuple[str, ...] = ()
    #: the declared schema of the unit's scenario tables (a :class:`models.schema.Table`:
    #: what :meth:`scenario` reads, key by key; :mod:`recon.schema` adds the run tables)
    scenario_schema: Any = None
    #: histories of a reconstruction's trajectory file
    trajectory_channels: tuple[str, ...] = ()
    #: histories :meth:`loads` and :meth:`energy` need
    load_channels: tuple[str, ...] = ()
    energy_channels: tuple[str, ...] = ()
    #: what a report shows of a reconstruction: the key loads and energies
    #: ``(section "loads" | "energy", quantity, label)``; the absorber histories as
    #: ``(caption, panel rows of (channel, label))``; the absorber hysteresis loops
    #: ``(load channel, its label, deflection channel, its label)``
    summary_quantities: tuple[tuple[str, str, str], ...] = ()
    absorber_figure: tuple[str, tuple[tuple[tuple[str, str], ...], ...]] | None = None
    absorber_loops: tuple[tuple[str, str, str, str], ...] = ()
    #: the unit's own history figures of a reconstruction, drawn after the relative state:
    #: ``(figure name, caption, panel rows of (channel, label))`` (channels of
    #: :attr:`trajectory_channels`)
    history_figures: tuple[tuple[str, str, tuple[tuple[tuple[str, str], ...], ...]], ...] = ()
    #: the unit's flight recorder (:class:`SensorSuite`): what synthetic flights and
    #: calibration studies record (:mod:`recon.recording`); None when it has none
    sensor_suite: SensorSuite | None = None

    # -- scenario and kernel -----------------------------------------------------------------
    @abc.abstractmethod
    def scenario(self, table: Mapping[str, Any]) -> Any:
        """The unit's scenario from a scenario table (SI, without the ``unit`` key)."""

    @abc.abstractmethod
    def batch(self, scenario: Any, parameters: Sequence[str], channels: Sequence[str], *,
              rate: float | None = None, duration: float | None = None,
              t_pre: float = 0.0) -> BatchRunner:
        """A batch runner of ``scenario`` for ``parameters`` (columns of ``theta``) giving
        ``channels`` at ``rate`` [Hz] for at most ``duration`` [s], with ``t_pre`` [s] of
        free flight before the start plane."""

    @abc.abstractmethod
    def output_rate(self, scenario: Any) -> float:
        """The scenario's own output rate [Hz]."""

    @abc.abstractmethod
    def simulate(self, scenario: Any, initial: Mapping[str, float] | None = None, *,
                 rate: float | None = None, duration: float | None = None,
                 t_pre: float = 0.0) -> Any:
        """One simulation from ``initial`` (:attr:`initial_conditions` by name, SI; None: the
        scenario's own), with ``t_pre`` [s] of free flight before the start plane. Returns an
        object with ``t`` [s], ``channels`` ({name: array}),
        ``events`` ({name: time or None}), ``to_frame()`` (the telemetry and history
        columns as a DataFrame with ``t``) and ``event_list()``. Raises
        :class:`models.errors.SimulationError` when the kernel stops."""

    @abc.abstractmethod
    def preset(self, name: str) -> Any:
        """The path of a shipped scenario (``"reference"``: the unit's reference docking)."""

    def scenario_initial(self, scenario: Any) -> dict[str, float]:
        """The scenario's own initial conditions (:attr:`initial_conditions` by name, SI)."""
        return {n: float(getattr(scenario.initial, n)) for n in self.initial_conditions}

    @abc.abstractmethod
    def passive_rate(self, scenario: Any) -> np.ndarray:
        """The passive vehicle's initial body rate [rad/s] (3,) in ``scenario``."""

    def with_thrust_delay(self, scenario: Any, delay: float) -> Any:
        """``scenario`` with its thrust window (counted from the start of the simulation)
        ``delay`` [s] later: the same thrust for a simulation that starts ``delay`` earlier
        than the start plane."""
        th = scenario.thrust
        if not th.stop > th.start:
            return scenario
        return dataclasses.replace(scenario, thrust=dataclasses.replace(
            th, start=th.start + delay, stop=th.stop + delay))

    def initial(self, table: Mapping[str, Any]) -> dict[str, float]:
        """Initial conditions from a table (every name of :attr:`initial_conditions`, SI);
        unknown, missing or non-numeric entries are an :class:`InputError` naming the key."""
        for k in table:
            if k not in self.initial_conditions:
                raise InputError(f"unknown key (expected one of: "
                                 f"{', '.join(sorted(self.initial_conditions))})", key=k)
        out = {}
        for k in self.initial_conditions:
            if k not in table:
                raise InputError("missing", key=k)
            v = table[k]
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not np.isfinite(v):
                raise InputError(f"expected a finite number, got {v!r}", key=k)
            out[k] = float(v)
        return out

    def benchmark(self, scenario: Any, *, repeats: int = 5, batch: int = 16) -> dict:
        """Speed figures of the unit's kernel on ``scenario`` (timing only)."""
        raise NotImplementedError(f"the {self.title} has no benchmark")

    # -- what it produces --------------------------------------------------------------------
    @property
    def sensor_channels(self) -> tuple[str, ...]:
        """Channels a flight records."""
        return tuple(n for n, c in self.channels.items() if c.sensor)

    def event_column(self, event: str) -> int:
        """Column of ``event`` in the runner's event array."""
        return self.events.index(event)

    @abc.abstractmethod
    def loads(self, histories: Mapping[str, np.ndarray]
              ) -> tuple[dict[str, np.ndarray], dict[str, str]]:
        """Peak loads of each row of ``histories`` ({channel: (n, n_t)}, NaN after a row's
        end): ``({quantity: (n,)}, {quantity: SI unit})``."""

    @abc.abstractmethod
    def energy(self, histories: Mapping[str, np.ndarray]
               ) -> tuple[dict[str, np.ndarray], dict[str, str]]:
        """Energy ledger of each row of ``histories`` at the end of its span."""

    # -- reconstruction ----------------------------------------------------------------------
    @abc.abstractmethod
    def first_guess(self, problem: Any) -> np.ndarray:
        """An analytic first guess of ``problem``'s free parameters from its telemetry (the
        problem is a :class:`recon.problem.ReconstructionProblem`; a unit uses it through its
        public methods only)."""


#: name -> "module:attribute" of the unit instance
_REGISTRY: dict[str, str] = {"probe_cone": "models.probe_cone.unit:UNIT",
                             "peripheral": "models.peripheral.unit:UNIT"}
_LOADED: dict[str, DockingUnit] = {}


def register_unit(name: str, target: str) -> None:
    """Register a unit: ``target`` is ``"package.module:ATTRIBUTE"`` of its instance."""
    _REGISTRY[name] = target
    _LOADED.pop(name, None)
    _ALL.clear()
    _ALL_PARAMETERS.clear()


def unit_names() -> tuple[str, ...]:
    """Names of the registered units."""
    return tuple(_REGISTRY)


def get_unit(name: str, *, key: str | None = "unit") -> DockingUnit:
    """The unit registered as ``name``; an :class:`InputError` naming ``key`` when there is
    none."""
    if not isinstance(name, str) or name not in _REGISTRY:
        raise InputError(f"unknown docking unit {name!r} (known: {', '.join(_REGISTRY)})",
                         key=key)
    if name not in _LOADED:
        module, attr = _REGISTRY[name].split(":")
        _LOADED[name] = getattr(importlib.import_module(module), attr)
    return _LOADED[name]


_ALL: dict[str, Channel] = {}
_ALL_PARAMETERS: dict[str, str] = {}


def all_parameters() -> dict[str, str]:
    """Every forward-model parameter of every registered unit and its SI unit (units that
    share a name give it the same unit): what a run configuration's ``unit`` of a parameter
    must convert to, an angle included (pint reads angles as dimensionless)."""
    if not _ALL_PARAMETERS:
        for name in _REGISTRY:
            for p, si in get_unit(name).parameters.items():
                _ALL_PARAMETERS.setdefault(p, si)
    return dict(_ALL_PARAMETERS)


def all_channels() -> dict[str, Channel]:
    """Every channel of every registered unit (the first unit's definition of a name wins;
    units that share a name give it the same unit and kind)."""
    if not _ALL:
        for name in _REGISTRY:
            for c, spec in get_unit(name).channels.items():
                _ALL.setdefault(c, spec)
    return dict(_ALL)
