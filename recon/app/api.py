"""The Python API of a flight's reconstruction: run one and read one back, the same object
either way.

.. code-block:: python

    from recon import reconstruct, load_result

    res = reconstruct("telemetry_samples/flights/nominal.parquet",
                      scenario="models/probe_cone/presets/reference.toml",
                      config="telemetry_samples/flights/run.toml", mcmc="never", seed=1)
    print(res)                       # status and each parameter's median and 95 % interval
    res["rel_vel_x"]["median"]       # [SI]
    idata = res.to_inference_data()  # ArviZ
    res.write_report()               # report.html, report.pdf beside result.json
    same = load_result(res.directory)

    # priors and bounds in lmfit's terms
    p = flight_parameters("telemetry_samples/flights/nominal.parquet",
                          scenario="models/probe_cone/presets/reference.toml",
                          config="telemetry_samples/flights/run.toml")
    p["rel_vel_x"].set(min=0.1, max=0.3)
    p["rel_roll"].set(vary=False, value=0.0)
    res = reconstruct(..., params=p)
    res.params                       # the result as lmfit.Parameters (medians, stderr)

:func:`reconstruct` is ``dockrecon reconstruct`` (:func:`recon.flight.reconstruct_flight`);
without an ``output`` directory its files live in a temporary directory as long as the
:class:`Result` does (:meth:`Result.save` keeps them). A :class:`Result` is what the
directory's ``result.json`` says, with the files beside it.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from recon.app.summary import display_units, parameter_table, read_result

__all__ = ["Result", "reconstruct", "load_result", "flight_parameters"]

#: the parts of ``result.json`` that say what the reconstruction found (what two results must
#: share to be equal); the rest records how and when (timings, versions, paths, digests)
SUBSTANCE = ("kind", "status", "status_reason", "warnings", "parameters", "loads", "energy",
             "identifiability", "seed")


class Result:
    """A reconstruction's result: its ``result.json`` (:attr:`document`) and the files beside
    it in :attr:`directory`.

    ``result[name]`` is a parameter's summary [SI] (``map``, ``median``, ``ci68``, ``ci95``,
    ``unit``, ``prior``); :attr:`status`, :attr:`parameters`, :attr:`diagnostics`,
    :attr:`loads` and :attr:`energy` are the document's. The repr is the table ``dockrecon
    show`` prints: the status and each free parameter's median and 95 % interval in the units
    its run configuration stated. Two results are equal when they found the same
    (:data:`SUBSTANCE`: status, parameters, loads, energy, warnings, seed), whatever their
    timings and directories.
    """

    def __init__(self, document: Mapping[str, Any], directory: str | os.PathLike) -> None:
        self.document = dict(document)
        self.directory = Path(directory)
        self._keep: Any = None           # the temporary directory this result lives in

    # -- reading ------------------------------------------------------------------------------
    @classmethod
    def load(cls, directory: str | os.PathLike) -> "Result":
        """The result in ``directory`` (or its ``result.json`` named directly); an
        :class:`models.errors.InputError` naming the path when there is none."""
        path = Path(directory)
        doc = read_result(path)
        return cls(doc, path.parent if path.is_file() else path)

    @property
    def status(self) -> str:
        """``ok``, ``implausible`` or ``failed``."""
        return str(self.document.get("status"))

    @property
    def parameters(self) -> dict[str, dict[str, Any]]:
        return self.document["parameters"]

    @property
    def diagnostics(self) -> dict[str, Any]:
        return self.document.get("diagnostics") or {}

    @property
    def loads(self) -> dict[str, Any]:
        return self.document.get("loads") or {}

    @property
    def energy(self) -> dict[str, Any]:
        return self.document.get("energy") or {}

    @property
    def params(self):
        """The result as :class:`lmfit.Parameters` [SI]: ``value`` the median, ``stderr`` the
        posterior standard deviation, ``min`` / ``max`` the prior's bounds, ``vary`` False
        for a fixed parameter, ``user_data`` ``{"unit", "prior", "map", "ci95"}`` (the units
        and priors as :mod:`identification.lmfit_bridge` keeps them). Parameters whose names
        lmfit does not take (a unit's number by its dotted scenario path) are left out."""
        import lmfit

        out = lmfit.Parameters()
        for name, p in self.parameters.items():
            if not name.isidentifier() or p.get("median") is None:
                continue
            prior = p.get("prior") or {}
            fixed = prior.get("kind") == "fixed"
            bounds = ({} if fixed else {"min": prior.get("lower", -float("inf")),
                                        "max": prior.get("upper", float("inf"))})
            out.add(name, value=float(p["median"]), vary=not fixed, **bounds,
                    user_data={"unit": p.get("unit", ""), "prior": prior,
                               "map": p.get("map"), "ci95": p.get("ci95")})
            if not fixed and p.get("stderr") is not None:
                out[name].stderr = float(p["stderr"])
        return out

    @property
    def units(self) -> dict[str, str]:
        """Each parameter's unit as its run configuration stated it (else SI)."""
        return display_units(self.document)

    def __getitem__(self, name: str) -> dict[str, Any]:
        try:
            return self.parameters[name]
        except KeyError:
            raise KeyError(f"no parameter {name!r} (parameters: "
                           f"{', '.join(self.parameters)})") from None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Result):
            return NotImplemented
        return all(self.document.get(k) == other.document.get(k) for k in SUBSTANCE)

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by content

    def __repr__(self) -> str:
        return f"Result({str(self.directory)!r})\n{parameter_table(self.document)}"

    def _repr_html_(self) -> str:
        """The table of :meth:`__repr__` for a notebook."""
        import html

        return f"<pre>{html.escape(repr(self))}</pre>"

    # -- products -----------------------------------------------------------------------------
    def to_inference_data(self):
        """The posterior as ArviZ InferenceData (``posterior.nc``, read into memory; the
        groups are described in :func:`recon.results.inference_data`); a
        :class:`models.errors.InputError` when the result has none (a failed fit)."""
        from identification.engines.mcmc import _arviz
        from models.errors import InputError

        path = self.directory / "posterior.nc"
        if not path.is_file():
            raise InputError(f"no posterior file (status {self.status}: "
                             f"{self.document.get('status_reason', '')})", source=str(path))
        idata = _arviz().from_netcdf(str(path))
        idata.load()                     # no open file behind it (a temporary directory)
        return idata

    def write_report(self, directory: str | os.PathLike | None = None,
                     formats: Sequence[str] = ("html", "pdf")) -> list[Path]:
        """The report (``report.html``, ``report.pdf``) into the result's directory or
        ``directory``; returns the paths written."""
        from reports.build import rebuild_report

        return rebuild_report(self.directory, formats,
                              directory=None if directory is None else Path(directory))

    def save(self, directory: str | os.PathLike) -> "Result":
        """Copy the result's files into ``directory`` (created; an existing result there is
        replaced) and return the result there."""
        target = Path(directory)
        if target.resolve() == self.directory.resolve():
            return self
        target.mkdir(parents=True, exist_ok=True)
        (target / "result.json").unlink(missing_ok=True)   # complete only when written last
        for f in sorted(self.directory.iterdir()):
            if f.is_file() and f.name != "result.json":
                shutil.copy2(f, target / f.name)
        shutil.copy2(self.directory / "result.json", target / "result.json")
        return Result.load(target)


def load_result(directory: str | os.PathLike) -> Result:
    """:meth:`Result.load`."""
    return Result.load(directory)


def flight_parameters(telemetry: str | os.PathLike | Sequence[str | os.PathLike],
                      scenario: Any, *,
                      config: str | os.PathLike | Mapping[str, Any] | None = None):
    """The parameters a reconstruction of this record would fit, as :class:`lmfit.Parameters`
    [SI] (start values, the priors' bounds, ``vary`` False for the fixed ones, units and
    prior shapes in ``user_data``: :func:`identification.lmfit_bridge.to_parameters`): edit
    them and hand them to :func:`reconstruct` as ``params``. The record is read because
    some priors are set by it (the clock offset's, anchored on its contact edge)."""
    from identification.lmfit_bridge import to_parameters
    from recon.flight import flight_problem

    return to_parameters(flight_problem(telemetry, scenario, config=config).problem.space)


def reconstruct(telemetry: str | os.PathLike | Sequence[str | os.PathLike], scenario: Any, *,
                config: str | os.PathLike | Mapping[str, Any] | None = None,
                output: str | os.PathLike | None = None, mcmc: str = "auto", seed: int = 0,
                params: Any = None, **options: Any) -> Result:
    """Reconstruct a flight (``dockrecon reconstruct``) and return its :class:`Result`.

    Parameters
    ----------
    telemetry
        The record: a file or several (Parquet, CSV; :func:`recon.telemetry.load_record`).
    scenario
        The scenario file (or a loaded scenario) that names the docking unit.
    config
        The run configuration file or its tables; default: the unit's defaults.
    output
        The result directory; default: a temporary directory that lasts as long as the
        returned result (:meth:`Result.save` keeps it).
    mcmc
        ``"auto"`` (emcee when the importance weights call for it), ``"always"`` or
        ``"never"``.
    seed
        Seed of every random choice (recorded in the result).
    params
        :class:`lmfit.Parameters` that restate any of the run configuration's parameters
        (start value, bounds, ``vary``, the prior in ``user_data``; :func:`flight_parameters`
        gives them all to start from).
    options
        The other keywords of :func:`recon.flight.reconstruct_flight` (``walkers``,
        ``steps``, ``starts``, ``max_nfev``, ``resume``, ``progress``).

    Bad input raises :class:`models.errors.InputError` naming the file and key, before
    anything is written.
    """
    from recon.config import MCMC_MODES
    from recon.flight import reconstruct_flight
    from models.errors import InputError

    if mcmc not in MCMC_MODES:
        raise InputError(f"must be one of {', '.join(MCMC_MODES)}, got {mcmc!r}", key="mcmc")
    keep = None
    if output is None:
        keep = tempfile.TemporaryDirectory(prefix="dockrecon-")
        out = Path(keep.name) / "result"
    else:
        out = Path(output)
    reconstruct_flight(telemetry, scenario, out, config=config, mcmc=mcmc, seed=seed,
                       params=params, **options)
    res = Result.load(out)
    res._keep = keep    # the temporary directory is removed with the result
    return res
