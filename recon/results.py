"""A result's files: its JSON document, the tables beside it and the posterior as ArviZ
InferenceData.

A result directory is complete exactly when its JSON document exists: the tables are written
first and the document last, each atomically (:func:`recon.io.atomic_path`). The document lists
the files written beside it (``files``) with their SHA-256 digests (``digests``), so a report
built later names any that went missing, were cut or were replaced (:func:`check_files`).
"""
from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from identification.result import Posterior, Result
from models.errors import InputError, check_room
from recon.io import atomic_path, write_json, write_table

__all__ = ["write_result", "file_digest", "check_files", "check_result", "inference_data",
           "write_inference_data", "read_posterior"]


def write_result(directory: str | os.PathLike, result: Result, *,
                 name: str = "result.json", also: Sequence[str] = ()) -> Path:
    """Write ``result``'s tables into ``directory``, then its JSON document ``name`` last,
    all atomically. ``also`` names files already written beside it for this result (the
    posterior's netCDF file): with the tables they are listed in ``files`` and their SHA-256
    digests in ``digests``, so that a reader can tell a file that went missing, was cut or
    was replaced (:func:`check_files`)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    for fname, (frame, units) in result.tables.items():
        write_table(frame, directory / fname, units)
    doc = result.to_dict()
    files = sorted({*doc.get("files", []), *(f for f in also if (directory / f).is_file())})
    doc["files"] = files
    doc["digests"] = {f: file_digest(directory / f) for f in files}
    return write_json(doc, directory / name)


def file_digest(path: str | os.PathLike) -> str:
    """SHA-256 of a file's bytes (hex)."""
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


#: the JSON type of each entry a result of any kind may have (a kind's own entries are its
#: builder's to read); a parameter's entry and its numeric fields
_ENTRY_TYPES: dict[str, tuple[type, ...]] = {
    "kind": (str,), "status": (str,), "status_reason": (str,), "warnings": (list,),
    "parameters": (dict,), "diagnostics": (dict,), "identifiability": (dict,), "loads": (dict,),
    "energy": (dict,), "settings": (dict,), "versions": (dict,), "seed": (int,),
    "events": (list,), "trajectory": (dict,), "files": (list,), "digests": (dict,),
}
_PARAMETER_NUMBERS = ("map", "median", "stderr", "start")
_PARAMETER_PAIRS = ("ci68", "ci95")
_JSON_NAMES = {str: "a string", list: "a list", dict: "an object", int: "a whole number",
               float: "a number"}


def check_result(doc: Any, source: str | os.PathLike) -> dict[str, Any]:
    """``doc`` (a ``result.json`` as read) when its shared entries have their types: an
    object, ``parameters`` an object of objects whose numbers are numbers and intervals pairs,
    and the other shared entries (:data:`_ENTRY_TYPES`) of their kind. Raises
    :class:`InputError` naming the file and the key of the first that is not (an edited or
    damaged result), instead of failing somewhere in a report builder."""
    src = str(source)

    def bad(key: str, want: str, got: Any) -> InputError:
        return InputError(f"must be {want}, got {type(got).__name__} {str(got)[:60]!r} (an "
                          "edited or damaged result?)", key=key, source=src)

    if not isinstance(doc, dict):
        raise InputError("not a dockrecon result (expected a JSON object)", source=src)
    for key, types in _ENTRY_TYPES.items():
        v = doc.get(key)
        if v is not None and (not isinstance(v, types) or isinstance(v, bool)):
            raise bad(key, _JSON_NAMES[types[0]], v)
    for name, entry in (doc.get("parameters") or {}).items():
        if not isinstance(entry, dict):
            raise bad(f"parameters.{name}", "an object", entry)
        for f in _PARAMETER_NUMBERS:
            v = entry.get(f)
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))):
                raise bad(f"parameters.{name}.{f}", "a number", v)
        for f in _PARAMETER_PAIRS:
            v = entry.get(f)
            if v is not None and not (isinstance(v, list) and len(v) == 2 and all(
                    x is None or (isinstance(x, (int, float)) and not isinstance(x, bool))
                    for x in v)):
                raise bad(f"parameters.{name}.{f}", "a pair of numbers", v)
    for i, f in enumerate(doc.get("files") or ()):
        if not isinstance(f, str):
            raise bad(f"files[{i}]", "a file name", f)
    return doc


def check_files(doc: Mapping[str, Any], directory: str | os.PathLike) -> dict[str, str]:
    """The files a result document lists (``files``) that are missing from ``directory`` or
    whose bytes are not those written (``digests``, where the document has them):
    ``{name: "missing" | "changed"}``."""
    directory = Path(directory)
    out: dict[str, str] = {}
    digests = doc.get("digests") if isinstance(doc.get("digests"), Mapping) else {}
    files = doc.get("files") if isinstance(doc.get("files"), list) else []
    for f in files:
        if not isinstance(f, str):
            continue
        path = directory / f
        if not path.is_file():
            out[f] = "missing"
        elif isinstance(digests.get(f), str) and file_digest(path) != digests[f]:
            out[f] = "changed"
    return out


#: the group of ``posterior.nc`` holding importance sampling's weighted draws (a group of
#: this format's own, beside ArviZ's)
IMPORTANCE_GROUP = "importance_draws"


def inference_data(posterior: Posterior, names: Sequence[str], units: Sequence[str], *,
                   observed: Mapping[str, tuple[np.ndarray, np.ndarray]] | None = None,
                   prior: np.ndarray | None = None, attrs: Mapping[str, Any] | None = None):
    """The posterior as ArviZ InferenceData, groups as ArviZ documents them.

    ``posterior``
        One variable per free parameter [SI, attribute ``unit``], ``(chain, draw)``, draws
        that ArviZ reads right as they are (:attr:`identification.result.Posterior.chains`):
        MCMC, every walker a chain after burn-in; importance sampling, as many distinct draws
        as the effective sample size in 4 chains (no draw repeats, so ArviZ's ESS is the
        weights' and its R-hat compares four independent sets); Laplace, its Gaussian draws
        as one chain.
    ``sample_stats``
        ``lp``, the unnormalized log posterior of each draw, where known.
    ``log_likelihood``
        One variable per telemetry channel: the channel's log-likelihood (summed over its
        samples in the fitted span) at each draw, where the engine kept it.
    ``observed_data``
        Each fitted channel's samples in the fitted span [SI], dimension ``<channel>_time``
        (the record's clock [s]).
    ``prior``
        Draws from the prior of the free parameters [SI].
    ``importance_draws`` (importance sampling only; a group of this format's own)
        Every proposal draw (dimension ``proposal_draw``) and its self-normalised
        ``log_weight``: the weighted sample the medians and intervals of ``result.json``
        come from.

    Attributes: ``inference_library`` (``emcee`` for MCMC, else ``dockrecon``) and its
    version, ``method``, ``created_at`` and ``arviz_version`` (ArviZ's own), and ``attrs``.
    """
    import emcee

    from identification.engines.mcmc import _arviz
    from models import __version__

    az = _arviz()
    names = list(names)
    chains = posterior.chains if posterior.chains is not None else posterior.samples[None]
    data = {n: chains[:, :, j] for j, n in enumerate(names)}
    stats = None
    if posterior.log_prob is not None and posterior.chains is not None:
        stats = {"lp": np.asarray(posterior.log_prob, float).reshape(chains.shape[:2])}
    loglik = None
    if posterior.log_likelihood is not None and posterior.chains is not None:
        ll = np.asarray(posterior.log_likelihood, float)
        loglik = {c: ll[:, :, k] for k, c in enumerate(posterior.likelihood_names)}
    obs, obs_dims, coords = None, None, {}
    if observed:
        obs, obs_dims = {}, {}
        for c, (t, y) in observed.items():
            obs[c] = np.asarray(y, float)
            obs_dims[c] = [f"{c}_time"]
            coords[f"{c}_time"] = np.asarray(t, float)
    pri = None if prior is None else {n: np.asarray(prior)[None, :, j]
                                      for j, n in enumerate(names)}
    library = ("emcee", emcee.__version__) if posterior.method == "mcmc" else (
        "dockrecon", __version__)
    meta = {"method": posterior.method, "inference_library": library[0],
            "inference_library_version": library[1], **dict(attrs or {})}
    idata = az.from_dict(posterior=data, sample_stats=stats, log_likelihood=loglik,
                         observed_data=obs, prior=pri, coords=coords or None,
                         dims=obs_dims, attrs=meta)
    for group in idata.groups():   # as ArviZ's own converters stamp every group
        idata[group].attrs.update(meta)
    for group in ("posterior", "prior"):
        if hasattr(idata, group):
            for n, u in zip(names, units):
                getattr(idata, group)[n].attrs["unit"] = u
    if posterior.proposal is not None and posterior.proposal_log_weight is not None:
        import xarray as xr

        draws = np.asarray(posterior.proposal, float)
        ds = xr.Dataset({n: ("proposal_draw", draws[:, j]) for j, n in enumerate(names)},
                        attrs=dict(idata.posterior.attrs))
        ds["log_weight"] = ("proposal_draw", np.asarray(posterior.proposal_log_weight, float))
        ds["log_weight"].attrs["meaning"] = "self-normalised log importance weight"
        for n, u in zip(names, units):
            ds[n].attrs["unit"] = u
        import warnings

        with warnings.catch_warnings():   # a group outside ArviZ's scheme, on purpose
            warnings.simplefilter("ignore", UserWarning)
            idata.add_groups({IMPORTANCE_GROUP: ds})
    return idata


def write_inference_data(posterior: Posterior, names: Sequence[str], units: Sequence[str],
                         path: str | os.PathLike, **kwargs) -> Path:
    """:func:`inference_data` (keywords ``observed``, ``prior``, ``attrs``) in a netCDF file,
    atomically."""
    idata = inference_data(posterior, names, units, **kwargs)
    path = Path(path)
    # HDF5 is not written into a device that cannot hold it (models.errors.check_room)
    check_room(path, 1.2 * sum(v.nbytes for g in idata.groups()
                               for v in idata[g].data_vars.values()))
    with atomic_path(path) as tmp:
        idata.to_netcdf(str(tmp), engine="h5netcdf")
    return path


def read_posterior(path: Path, names: Sequence[str]) -> tuple[np.ndarray, np.ndarray | None]:
    """A result's posterior draws from its ``posterior.nc`` (:func:`write_inference_data`): ``(N,
    len(names))`` [SI] in ``names`` order, and their log posterior where the engine kept it
    (MCMC, importance sampling), else None."""
    from identification.engines.mcmc import _arviz

    idata = _arviz().from_netcdf(str(path))
    post = idata.posterior
    x = np.stack([np.asarray(post[n]).ravel() for n in names], axis=1)
    lp = None
    stats = getattr(idata, "sample_stats", None)
    if stats is not None and "lp" in stats:
        lp = np.asarray(stats["lp"]).ravel()
    return x, lp
