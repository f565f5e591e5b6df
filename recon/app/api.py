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

__all__ = ["Result", "reconstruct", "load_result"]

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


def reconstruct(telemetry: str | os.PathLike | Sequence[str | os.PathLike], scenario: Any, *,
                config: str | os.PathLike | Mapping[str, Any] | None = None,
                output: str | os.PathLike | None = None, mcmc: str = "auto", seed: int = 0,
                **options: Any) -> Result:
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
                       **options)
    res = Result.load(out)
    res._keep = keep    # the temporary directory is removed with the result
    return res
