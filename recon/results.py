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

__all__ = ["write_result", "file_digest", "check_files", "check_result", "write_inference_data",
           "read_posterior"]


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


def write_inference_data(posterior: Posterior, names: Sequence[str], units: Sequence[str],
                         path: str | os.PathLike) -> Path:
    """The posterior as ArviZ InferenceData in a netCDF file (atomically): group
    ``posterior`` with one variable per parameter [SI, attribute ``unit``] and, for MCMC,
    ``sample_stats.lp``. MCMC: every walker a chain, post-burn-in; otherwise the posterior's
    equally weighted draws as one chain (attribute ``method`` says which)."""
    from identification.engines.mcmc import _arviz

    az = _arviz()
    chains = posterior.chains if posterior.chains is not None else posterior.samples[None]
    data = {n: chains[:, :, j] for j, n in enumerate(names)}
    stats = ({"lp": posterior.log_prob} if posterior.log_prob is not None
             and posterior.chains is not None else None)
    idata = az.from_dict(posterior=data, sample_stats=stats,
                         attrs={"method": posterior.method, "source": "dockrecon"})
    for n, u in zip(names, units):
        idata.posterior[n].attrs["unit"] = u
    path = Path(path)
    # HDF5 is not written into a device that cannot hold it (models.errors.check_room)
    check_room(path, 1.2 * sum(v.nbytes for g in idata.groups()
                               for v in idata[g].data_vars.values()))
    with atomic_path(path) as tmp:
        idata.to_netcdf(str(tmp), engine="h5netcdf")
    return path


def read_posterior(path: Path, names: Sequence[str]) -> tuple[np.ndarray, np.ndarray | None]:
    """A result's posterior draws from its ``posterior.nc`` (:func:`write_inference_data`): ``(N,
    len(names))`` [SI] in ``names`` order, and their log posterior where the sampler kept it
    (MCMC), else None."""
    from identification.engines.mcmc import _arviz

    idata = _arviz().from_netcdf(str(path))
    post = idata.posterior
    x = np.stack([np.asarray(post[n]).ravel() for n in names], axis=1)
    lp = None
    stats = getattr(idata, "sample_stats", None)
    if stats is not None and "lp" in stats:
        lp = np.asarray(stats["lp"]).ravel()
    return x, lp
