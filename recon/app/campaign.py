"""Campaigns: many flights reconstructed into one directory, on a Dask cluster.

A campaign is a manifest of flights (:func:`load_manifest`), each reconstructed into
``DIR/<flight>/`` exactly as ``dockrecon reconstruct`` would (same function, same seed, same
files, the report included), and one catalog over them:

``DIR/catalog.parquet``
    one row per flight and parameter (:data:`CATALOG_COLUMNS`): the flight, the parameter and
    its unit, the truth when the manifest gives one, MAP, median, 68 / 95 % bounds, standard
    deviation, the flight's status and its reason, the interval method and a diagnostics
    summary, the warnings, the wall time and the source version. A flight without a result
    (unreadable telemetry, a lost worker) has one row with ``parameter`` null and its reason.
``DIR/campaign.json``
    the manifest as read, every flight's state (``done`` / ``error`` / ``lost``), the settings
    of the executor, the seed rule, versions.

Manifest (TOML; paths relative to the manifest's directory)::

    [defaults]                       # shared by every flight; a flight may override any key
    scenario = "../../models/probe_cone/presets/reference.toml"
    config = "run.toml"              # run configuration (optional)
    seed = 1
    [defaults.options]               # reconstruct's options: mcmc ("auto", "always",
    mcmc = "never"                   #   "never"; true / false: auto / never), steps, walkers,
                                     #   starts, max_nfev, mcmc_below_ess

    [[flight]]
    name = "nominal"                 # the result directory DIR/nominal
    telemetry = "nominal.parquet"    # or a list of files on separate time bases
    truth = "nominal.truth.json"     # optional: {"parameters": {NAME: value [SI]}}

    [[glob]]                         # optional: one flight per matching file, named by its
    pattern = "realistic/*.parquet"  #   stem, truth STEM.truth.json beside it when present
    config = "realistic/run.toml"    #   (any flight key may be set for the group)

Execution. The flights are Dask tasks: an embedded :class:`distributed.LocalCluster` by default
(``workers`` processes with one thread each; numba's and the BLAS thread pools of each worker
limited so the workers together use the machine's cores, not more), or an existing cluster at
``scheduler`` (``tcp://host:port``; on an HPC machine started with dask-jobqueue). A worker
that dies takes its flight with it; the scheduler gives the flight to another worker (Dask's
``distributed.scheduler.allowed-failures`` times), after which it is recorded ``lost``. A
flight whose reconstruction raises (bad telemetry, a wrong scenario key) is recorded with its
one-line reason and the campaign goes on; an implausible or failed fit is a result with its
status, as with ``reconstruct``. The catalog and ``campaign.json`` are rewritten (atomically)
after every flight, and each flight directory is replaced whole (:mod:`recon.app.outputs`), so an
interrupted campaign leaves every finished flight complete: ``resume`` skips the flights whose
directory holds a result of the same flight specification (:func:`spec_digest`: its files'
contents, the TOML files' by their parsed tables, and its settings) and redoes the rest.
"""
from __future__ import annotations

import contextlib
import dataclasses
import glob as _glob
import hashlib
import json
import logging
import math
import os
import time
import tomllib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from models.errors import InputError
from recon.manifest import CAMPAIGN, DEFAULTS, FLIGHT_KEYS, GLOB, OPTIONS

__all__ = ["FlightSpec", "load_manifest", "spec_digest", "catalog_rows", "run_campaign",
           "reconstruct_one", "read_truth", "completed", "CATALOG_COLUMNS", "FLIGHT_STAMP",
           "OPTION_KEYS"]

log = logging.getLogger("dockrecon.campaign")

#: file a flight's directory holds beside its result: the specification it was made from
FLIGHT_STAMP = "campaign_flight.json"

#: reconstruct options a manifest may set (``[defaults.options]`` or a flight's ``options``):
#: name -> (type, lowest, highest), from their declarations (:data:`recon.manifest.OPTIONS`)
OPTION_KEYS: dict[str, tuple[type, float, float]] = {
    k.name: ((bool, 0, 1) if k.type.startswith("boolean") else
             (int if k.type == "integer" else float, k.limits()[0], k.limits()[2]))
    for k in OPTIONS.keys()}

_FLIGHT_KEYS = FLIGHT_KEYS

#: columns of ``catalog.parquet`` and their units (``unit`` holds each parameter's own)
CATALOG_COLUMNS = {
    "flight": "", "parameter": "", "unit": "", "truth": "", "map": "", "median": "",
    "ci68_lo": "", "ci68_hi": "", "ci95_lo": "", "ci95_hi": "", "stderr": "", "z": "",
    "in68": "", "in95": "", "status": "", "status_reason": "", "method": "",
    "diagnostics": "", "warnings": "", "wall_s": "s", "seed": "", "source": ""}


@dataclasses.dataclass(frozen=True)
class FlightSpec:
    """One flight of a campaign (paths absolute).

    Attributes
    ----------
    name
        Its result directory's name (letters, digits, ``-``, ``_``, ``.``).
    telemetry
        Telemetry file(s).
    scenario
        Scenario TOML (names the docking unit).
    config
        Run configuration TOML, or None (the scenario's tables and the defaults).
    truth
        JSON file ``{"parameters": {NAME: value}}`` [SI], or None.
    seed
        Seed of the reconstruction (as ``reconstruct --seed``).
    options
        ``reconstruct`` options (:data:`OPTION_KEYS`).
    """

    name: str
    telemetry: tuple[str, ...]
    scenario: str
    config: str | None = None
    truth: str | None = None
    seed: int = 0
    options: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["telemetry"] = list(self.telemetry)
        d["options"] = dict(self.options)
        return d


def _path(value: Any, base: Path, key: str, src: str, *, must_exist: bool = True) -> str:
    if not isinstance(value, str) or not value:
        raise InputError("must be a path (a string)", key=key, source=src)
    p = (base / value).resolve() if not os.path.isabs(value) else Path(value)
    if must_exist and not p.exists():
        raise InputError(f"no such file: {p}", key=key, source=src)
    return str(p)


def _options(value: Any, key: str, src: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise InputError("must be a table", key=key, source=src)
    out = {}
    for k, v in value.items():
        if k not in OPTION_KEYS:
            raise InputError(f"unknown option (allowed: {', '.join(OPTION_KEYS)})",
                             key=f"{key}.{k}", source=src)
        if k == "mcmc" and isinstance(v, str):
            # a mode (recon.config.MCMC_MODES); true / false are "auto" / "never"
            from recon.config import mcmc_mode

            try:
                out[k] = mcmc_mode(v, key=f"{key}.{k}")
            except InputError as exc:
                raise exc.with_source(src)
            continue
        kind, lo, hi = OPTION_KEYS[k]
        ok = (isinstance(v, bool) if kind is bool else
              not isinstance(v, bool) and isinstance(v, (int, float))
              and (kind is float or float(v).is_integer())
              and math.isfinite(v) and lo <= v <= hi)
        if not ok:
            what = {bool: "true or false", int: "a whole number",
                    float: "a number"}[kind]
            rng = "" if kind is bool else f" in [{lo:g}, {hi:g}]"
            raise InputError(f"must be {what}{rng}, got {v!r}", key=f"{key}.{k}", source=src)
        out[k] = kind(v)
    return out


#: what a campaign (or a calibration study) writes in its directory beside the flights: no
#: flight may be named so
CAMPAIGN_FILES = frozenset({"campaign.json", "catalog.parquet", "report.html", "report.pdf",
                            "calibration.json", "telemetry"})
_NAME_OK = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")


def _seed(seed: Any, key: str, src: str) -> int:
    """``seed`` if it is a seed (a whole number in [0, 2**63)); else the error naming ``key``."""
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
        raise InputError(f"must be a whole number >= 0, got {seed!r}", key=key, source=src)
    return seed


def _spec(entry: Mapping[str, Any], defaults: Mapping[str, Any], base: Path, key: str,
          src: str) -> FlightSpec:
    for k in entry:
        if k not in _FLIGHT_KEYS and k != "pattern":
            raise InputError(f"unknown key (allowed: {', '.join(_FLIGHT_KEYS)})",
                             key=f"{key}.{k}", source=src)
    merged = {**defaults, **{k: v for k, v in entry.items() if k != "options"}}
    options = _options(defaults.get("options", {}), "defaults.options", src)
    options.update(_options(entry.get("options", {}), f"{key}.options", src))
    name = merged.get("name")
    if not isinstance(name, str) or not name or not set(name) <= _NAME_OK \
            or name.startswith("."):
        raise InputError("must be a name of letters, digits, '-', '_' and '.', not starting "
                         "with '.'", key=f"{key}.name", source=src)
    if name in CAMPAIGN_FILES:
        raise InputError(f"{name!r} is a file of the campaign directory itself (its own "
                         f"files: {', '.join(sorted(CAMPAIGN_FILES))}); name the flight "
                         "otherwise", key=f"{key}.name", source=src)
    tel = merged.get("telemetry")
    tels = [tel] if isinstance(tel, str) else tel
    if not isinstance(tels, list) or not tels:
        raise InputError("must be a file or a list of files", key=f"{key}.telemetry",
                         source=src)
    if "scenario" not in merged:
        raise InputError("no scenario (give it here or in [defaults])", key=f"{key}.scenario",
                         source=src)
    seed = _seed(merged.get("seed", 0), f"{key}.seed", src)
    return FlightSpec(
        name=name,
        telemetry=tuple(_path(t, base, f"{key}.telemetry", src) for t in tels),
        scenario=_path(merged["scenario"], base, f"{key}.scenario", src),
        config=(_path(merged["config"], base, f"{key}.config", src)
                if merged.get("config") is not None else None),
        truth=(_path(merged["truth"], base, f"{key}.truth", src)
               if merged.get("truth") is not None else None),
        seed=seed, options=options)


def load_manifest(path: str | os.PathLike, *, extra_tables: Sequence[str] = (),
                  seed: int = 0) -> list[FlightSpec]:
    """The flights of a campaign manifest (module docstring), in manifest order (globbed
    flights sorted by name). ``extra_tables`` are tables a caller reads itself (a fleet's
    ``[fleet]``); ``seed`` is the seed of a flight the manifest gives none (neither the
    flight nor ``[defaults]``: ``campaign --seed``). Errors name the manifest and the key."""
    from recon.io import load_toml

    path = Path(path)
    doc = load_toml(path)
    src, base = str(path), path.resolve().parent
    allowed = (*CAMPAIGN.order(), *extra_tables)
    for k in doc:
        if k not in allowed:
            raise InputError(f"unknown table (allowed: {', '.join(allowed)})", key=k,
                             source=src)
    defaults = doc.get("defaults", {})
    if not isinstance(defaults, Mapping):
        raise InputError("must be a table", key="defaults", source=src)
    for k in defaults:
        if k not in DEFAULTS.names():
            raise InputError(f"unknown key (allowed: {', '.join(DEFAULTS.order())})",
                             key=f"defaults.{k}", source=src)
    if "seed" in defaults:
        _seed(defaults["seed"], "defaults.seed", src)
    defaults = {"seed": seed, **defaults}
    specs: list[FlightSpec] = []
    flights = doc.get("flight", [])
    if not isinstance(flights, list):
        raise InputError("must be an array of tables ([[flight]])", key="flight", source=src)
    for i, entry in enumerate(flights):
        specs.append(_spec(entry, defaults, base, f"flight[{i}]", src))
    globs = doc.get("glob", [])
    if not isinstance(globs, list):
        raise InputError("must be an array of tables ([[glob]])", key="glob", source=src)
    for i, entry in enumerate(globs):
        key = f"glob[{i}]"
        pattern = entry.get("pattern")
        if not isinstance(pattern, str):
            raise InputError("must be a file pattern (a string)", key=f"{key}.pattern",
                             source=src)
        if "name" in entry or "telemetry" in entry:
            raise InputError("a glob names its flights by their files: no name or telemetry",
                             key=key, source=src)
        for k in entry:
            if k not in GLOB.names():
                raise InputError(f"unknown key (allowed: {', '.join(GLOB.order())})",
                                 key=f"{key}.{k}", source=src)
        found = sorted(p for p in _glob.glob(str(base / pattern))
                       if not p.endswith(".truth.json"))
        if not found:
            raise InputError(f"matches no file (in {base})", key=f"{key}.pattern", source=src)
        for f in found:
            stem = Path(f).stem
            truth = Path(f).with_name(f"{stem}.truth.json")
            e = {k: v for k, v in entry.items() if k != "pattern"}
            e.update(name=stem, telemetry=f)
            if "truth" not in e and truth.exists():
                e["truth"] = str(truth)
            specs.append(_spec(e, defaults, base, key, src))
    if not specs:
        raise InputError("no flights ([[flight]] or [[glob]])", source=src)
    seen: dict[str, int] = {}
    for s in specs:
        if s.name in seen:
            raise InputError(f"two flights are named {s.name!r}: each needs its own result "
                             "directory", key="flight", source=src)
        seen[s.name] = 1
    return specs


def _file_bytes(path: str, parsed: bool) -> bytes:
    """What :func:`spec_digest` hashes of one file: a TOML file's parsed tables as canonical
    JSON (``parsed``; its comments and layout do not count), any other file's bytes. A TOML
    file that does not parse is hashed as bytes (the reconstruction reports it)."""
    raw = Path(path).read_bytes()
    if parsed and path.endswith(".toml"):
        try:
            doc = tomllib.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, tomllib.TOMLDecodeError):
            return raw
        return json.dumps(doc, sort_keys=True, default=str).encode()
    return raw


def spec_digest(spec: FlightSpec, *, parsed: bool = True) -> str:
    """SHA-256 of a flight specification: its settings and the contents of every file it
    names. ``resume`` keeps a flight's result only when this is unchanged.

    The scenario and run-configuration TOML files count by their parsed tables, so an edit
    of their comments or layout does not make a finished flight stale; a changed value does.
    ``parsed=False`` gives the digest of earlier versions (every file by its bytes), which
    :func:`completed` still accepts, so that a campaign stamped before this change resumes
    without redoing its flights."""
    h = hashlib.sha256()
    d = spec.to_dict()
    for key in ("telemetry", "scenario", "config", "truth"):
        files = d[key] if isinstance(d[key], list) else [d[key]]
        for f in files:
            if f is not None:
                h.update(_file_bytes(f, parsed))
            h.update(b"\0")
    d = {k: v for k, v in d.items() if k not in ("telemetry", "scenario", "config", "truth")}
    h.update(json.dumps(d, sort_keys=True).encode())
    return h.hexdigest()


def _diag_summary(doc: Mapping[str, Any]) -> str:
    diag = doc.get("diagnostics") or {}
    parts = []
    opt = diag.get("optimizer") or {}
    if "best_cost" in opt:
        parts.append(f"cost {opt['best_cost']:.1f}")
    imp = diag.get("importance") or {}
    if imp.get("ess") is not None:
        parts.append(f"importance ESS {imp['ess']:.0f}")
    mc = diag.get("mcmc") or {}
    if mc:
        rhat = [v for v in (mc.get("rhat") or {}).values() if v is not None
                and math.isfinite(v)]
        ess = [v for v in (mc.get("ess") or {}).values() if v is not None and math.isfinite(v)]
        parts.append(f"mcmc {mc.get('status')} {mc.get('steps')} steps"
                     + (f", max R-hat {max(rhat):.3f}" if rhat else "")
                     + (f", min ESS {min(ess):.0f}" if ess else ""))
    return "; ".join(parts)


def catalog_rows(name: str, doc: Mapping[str, Any] | None, *, truth: Mapping[str, float]
                 | None = None, wall_s: float | None = None, status: str | None = None,
                 reason: str | None = None) -> list[dict[str, Any]]:
    """The catalog rows of one flight (:data:`CATALOG_COLUMNS`): one per free parameter of its
    ``result.json`` document ``doc``; a flight without a result (``doc`` None) has one row
    with ``status`` and ``reason``."""
    base = {c: None for c in CATALOG_COLUMNS}
    base.update(flight=name, wall_s=wall_s)
    if doc is None:
        return [{**base, "status": status or "error", "status_reason": reason or ""}]
    versions = doc.get("versions") or {}
    base.update(status=doc.get("status", "ok"), status_reason=doc.get("status_reason", ""),
                method=(doc.get("diagnostics") or {}).get("method"),
                diagnostics=_diag_summary(doc), warnings=" | ".join(doc.get("warnings") or []),
                seed=doc.get("seed"),
                source=versions.get("dockrecon_source") or versions.get("dockrecon"))
    rows = []
    for pname, p in (doc.get("parameters") or {}).items():
        if (p.get("prior") or {}).get("kind") == "fixed":
            continue
        row = {**base, "parameter": pname, "unit": p.get("unit"), "map": p.get("map"),
               "median": p.get("median"), "stderr": p.get("stderr")}
        for level in ("68", "95"):
            ci = p.get(f"ci{level}") or [None, None]
            row[f"ci{level}_lo"], row[f"ci{level}_hi"] = ci
        t = (truth or {}).get(pname)
        if t is not None:
            row["truth"] = float(t)
            if row["ci68_lo"] is not None:
                row["in68"] = bool(row["ci68_lo"] <= t <= row["ci68_hi"])
                row["in95"] = bool(row["ci95_lo"] <= t <= row["ci95_hi"])
                half = 0.5 * (row["ci68_hi"] - row["ci68_lo"])
                row["z"] = (t - row["median"]) / half if half > 0 else None
        rows.append(row)
    return rows or [{**base, "status": base["status"]}]


def read_truth(spec: FlightSpec) -> dict[str, float] | None:
    """A flight's truth table (``parameters`` of its truth JSON) or None."""
    if spec.truth is None:
        return None
    try:
        doc = json.loads(Path(spec.truth).read_text())
        table = doc["parameters"] if isinstance(doc, dict) and "parameters" in doc else doc
        return {str(k): float(v) for k, v in table.items()
                if isinstance(v, (int, float)) and not isinstance(v, bool)}
    except (OSError, ValueError, AttributeError, TypeError) as exc:
        raise InputError(f"not a truth file ({exc})", source=spec.truth) from None


def completed(spec: FlightSpec, out: Path) -> dict[str, Any] | None:
    """The stamp of a flight whose directory holds a complete result of this very
    specification (for ``resume``), else None."""
    d = out / spec.name
    try:
        stamp = json.loads((d / FLIGHT_STAMP).read_text())
    except (OSError, ValueError):
        return None
    if not (d / "result.json").exists():
        return None
    digest = stamp.get("digest")
    # the byte digest (earlier stamps) is computed only when the current one differs: each
    # digest reads every file of the flight
    if digest != spec_digest(spec) and digest != spec_digest(spec, parsed=False):
        return None
    return stamp


@contextlib.contextmanager
def _flight_logs(name: str):
    """dockrecon's log lines name the flight while it runs (a worker runs one flight at a
    time, and its lines reach the campaign's stderr among the other workers')."""
    previous = logging.getLogRecordFactory()

    def factory(*args, **kwargs):
        record = previous(*args, **kwargs)
        if record.name.startswith("dockrecon"):
            record.msg = f"flight {name}: {record.msg}"
        return record

    logging.setLogRecordFactory(factory)
    try:
        yield
    finally:
        logging.setLogRecordFactory(previous)


def reconstruct_one(spec, out: str) -> dict:
    """The campaign's per-flight job (runs on a Dask worker): what ``dockrecon reconstruct``
    does for one flight (:func:`recon.app.jobs.reconstruct_into`), into ``out/<flight>``
    replaced whole with its report and its stamp (:data:`FLIGHT_STAMP`, also returned). A
    flight whose input is refused returns status ``error`` with the one-line reason instead
    of raising: the campaign goes on."""
    from models.errors import InputError
    from recon.app.jobs import reconstruct_into

    t0 = time.time()
    digest = spec_digest(spec)
    opts = dict(spec.options)
    stamp: dict = {"digest": digest}

    def stamped(res) -> dict:
        stamp.update(status=res.status, reason=res.status_reason, warnings=list(res.warnings),
                     wall_s=round(time.time() - t0, 2))
        return {FLIGHT_STAMP: {"kind": "campaign_flight", **stamp}}

    try:
        with _flight_logs(spec.name):
            reconstruct_into(Path(out) / spec.name, list(spec.telemetry), spec.scenario,
                             extra=stamped, config=spec.config, seed=spec.seed,
                             walkers=opts.get("walkers"), steps=opts.get("steps"),
                             mcmc=opts.get("mcmc", True),
                             mcmc_below_ess=opts.get("mcmc_below_ess"),
                             starts=opts.get("starts"), max_nfev=opts.get("max_nfev"))
    except InputError as exc:     # DataError too: the flight's input, not the campaign
        return {"digest": digest, "status": "error", "reason": str(exc),
                "wall_s": round(time.time() - t0, 2)}
    return stamp


#: Dask settings of the embedded cluster (:func:`_client`), set while it starts; the nannies
#: hand them to their workers. The cluster has no dashboard, so nothing reads what these would
#: collect, and each costs CPU the flights could use (idle, a client and two workers took
#: 4.2-4.6 s of CPU a minute with Dask's defaults and 1.45-1.53 s with these, at load 2.7;
#: 6.3-7.2 and 1.6-1.8 s at load 6-10: ``benchmarks/embedded_cluster_idle.py``,
#: docs/design/campaign_executor.rst, the embedded cluster's own CPU):
#:
#: * the workers' statistical profiler, a stack sample of every thread every 10 ms;
#: * the system monitor (CPU, memory, network of each process for the dashboard's plots),
#:   every 0.5 s by default, here 5 s (the scheduler's memory figures still come from it);
#: * the event-loop health tick, every 20 ms by default, here 1 s (it warns when the loop
#:   was blocked; a flight runs in the worker's task thread, not on the loop).
#:
#: An existing cluster (``scheduler``) keeps its own configuration.
EMBEDDED_DASK_CONFIG = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.system-monitor.interval": "5s",
    "distributed.admin.tick.interval": "1s",
}


#: ``worker(spec, out_dir) -> stamp``: reconstruct one flight into ``out_dir / spec.name`` and
#: return its stamp (what :data:`FLIGHT_STAMP` holds: digest, status, reason, wall_s)
Worker = Callable[[FlightSpec, str], dict]


#: where the embedded cluster's dashboard listens when asked for (``--dashboard``); Dask
#: moves to a free port, saying so, when another cluster has it
DASHBOARD_ADDRESS = "127.0.0.1:8787"


def check_dashboard() -> None:
    """Refuse ``--dashboard`` when the dashboard cannot be served (Dask's dashboard is a
    Bokeh application), naming the option and the install line."""
    try:
        import bokeh  # noqa: F401
    except ImportError:
        raise InputError("the Dask dashboard needs Bokeh: pip install 'dockrecon[dashboard]' "
                         "(or bokeh>=3.1)", key="--dashboard") from None


def _client(workers: int | None, scheduler: str | None, threads: int, *,
            dashboard: bool = False):
    """A Dask client: on an existing cluster, or on an embedded LocalCluster of ``workers``
    single-threaded processes whose numeric thread pools hold ``threads`` threads each; with
    ``dashboard``, the embedded cluster serves Dask's dashboard (at
    :data:`DASHBOARD_ADDRESS`) and its workers collect what it shows (profiles, system
    monitor at Dask's defaults)."""
    import dask
    from distributed import Client, LocalCluster

    from recon.app.dask_worker import QUIET_ENV, quiet_logs

    # the scheduler's and tornado's own chatter (INFO lines, the shutdown tracebacks of broken
    # connections after Ctrl-C) is not the user's business unless -v asked for INFO
    quiet = logging.getLogger("dockrecon").getEffectiveLevel() > logging.INFO
    quiet_logs(quiet)
    if scheduler is not None:
        return Client(scheduler), None
    env = {v: str(threads) for v in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS",
                                     "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
    env[QUIET_ENV] = "1" if quiet else "0"
    # the workers ignore SIGINT and keep quiet (recon.app.dask_worker): Ctrl-C is the client's;
    # no dashboard, so none of its data collection (EMBEDDED_DASK_CONFIG). The scheduler
    # still serves its health and metrics routes over HTTP, by default on port 8787, and
    # warns on the user's terminal when another cluster has it (two campaigns on one
    # machine): it takes a free port on the loopback instead
    if dashboard:
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                               dashboard_address=DASHBOARD_ADDRESS, env=env,
                               silence_logs=logging.CRITICAL if quiet else logging.INFO,
                               preload=["recon.app.dask_worker"])
        return Client(cluster), cluster
    with dask.config.set(EMBEDDED_DASK_CONFIG):
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                               dashboard_address=None, env=env,
                               scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
                               silence_logs=logging.CRITICAL if quiet else logging.INFO,
                               preload=["recon.app.dask_worker"])
    return Client(cluster), cluster


def run_campaign(specs: Sequence[FlightSpec], out: str | os.PathLike, worker: Worker,
                 **options: Any) -> dict[str, Any]:
    """Reconstruct every flight of ``specs`` into ``out`` with ``worker`` on Dask (module
    docstring) and write the catalog; returns the ``campaign.json`` document. ``out`` is
    locked for the run (:func:`recon.app.outputs.locked`: a second campaign into it refuses,
    naming this one). Options: :func:`_run_campaign`."""
    from recon.app.outputs import locked

    with locked(out):
        return _run_campaign(specs, out, worker, **options)


def _run_campaign(specs: Sequence[FlightSpec], out: str | os.PathLike, worker: Worker, *,
                  workers: int | None = None, scheduler: str | None = None,
                 resume: bool = False, settings: Mapping[str, Any] | None = None,
                 progress: Callable[[dict], None] | None = None,
                 on_flight: Callable[[str, dict], None] | None = None,
                 threads: int | None = None,
                 dashboard: Callable[[str], None] | None = None) -> dict[str, Any]:
    """:func:`run_campaign` with ``out`` locked.

    Parameters
    ----------
    specs
        The flights (:func:`load_manifest`).
    out
        Campaign directory.
    worker
        The per-flight job (a picklable top-level function, :data:`Worker`).
    workers
        Worker processes of the embedded cluster (default: the machine's cores).
    scheduler
        Address of an existing Dask scheduler instead (``tcp://host:port``).
    resume
        Keep the flights whose directory holds a complete result of the same specification.
    settings
        Recorded in ``campaign.json`` (the manifest path, the command's options).
    progress
        Called with the counts ``{"done", "running", "failed", "total", "eta_s"}`` after
        every flight.
    on_flight
        Called with a flight's name and state (its stamp, ``state``) when it ends, after the
        catalog is written; for a flight kept by ``resume`` (state ``resumed``), once before
        the first flight is submitted, so that what the caller writes after every flight
        counts the kept ones too.
    threads
        numba / BLAS threads of each worker of the embedded cluster (default: the cores
        shared out among the workers, at least 1).
    dashboard
        Called with the address of the cluster's Dask dashboard once the client is up (the
        embedded cluster then serves one, :func:`_client`; an existing scheduler's is its
        own, where it serves one).
    """
    from distributed import as_completed

    from identification.provenance import versions
    from recon.io import write_json

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    n_cores = os.cpu_count() or 1
    if scheduler is None:
        workers = max(1, int(workers or n_cores))
    threads = max(1, int(threads) if threads else n_cores // max(1, workers or 1))
    states: dict[str, dict[str, Any]] = {}
    todo = []
    for spec in specs:
        stamp = completed(spec, out) if resume else None
        if stamp is not None:
            states[spec.name] = {**stamp, "state": "done", "resumed": True}
        else:
            todo.append(spec)
    t0 = time.time()
    doc: dict[str, Any] = {}

    def write() -> None:
        nonlocal doc
        _write_catalog(specs, out, states)
        doc = {"kind": "campaign", "flights": {s.name: {"spec": s.to_dict(),
                                                        **states.get(s.name,
                                                                     {"state": "pending"})}
                                               for s in specs},
               "settings": {**dict(settings or {}), "workers": workers,
                            "scheduler": scheduler, "threads_per_worker": threads,
                            "resume": resume},
               "counts": _counts(states, len(specs)), "versions": versions(),
               "wall_s": round(time.time() - t0, 1)}
        write_json(doc, out / "campaign.json")

    def report(running: int) -> None:
        if progress is None:
            return
        c = _counts(states, len(specs))
        fresh = [s for s in states.values() if not s.get("resumed") and s.get("wall_s")]
        left = len(specs) - c["done"] - c["failed"]
        rate = (time.time() - t0) / max(1, len(fresh))
        c.update(running=running, eta_s=(rate * left if fresh else None))
        progress(c)

    write()
    if on_flight is not None:
        for spec in specs:
            if states.get(spec.name, {}).get("resumed"):
                on_flight(spec.name, states[spec.name])
    if not todo:
        report(0)
        return doc
    client, cluster = _client(workers, scheduler, threads, dashboard=dashboard is not None)
    if dashboard is not None:
        dashboard(client.dashboard_link)
    try:
        futures = {client.submit(worker, spec, str(out), key=f"flight-{spec.name}-"
                                 f"{spec_digest(spec)[:12]}", pure=False): spec
                   for spec in todo}
        pending = len(futures)
        report(min(pending, workers or pending))
        for fut in as_completed(futures):
            spec = futures[fut]
            pending -= 1
            try:
                stamp = fut.result()
                states[spec.name] = {**stamp, "state": "done" if stamp.get("status") != "error"
                                     else "error"}
            except Exception as exc:   # the worker died too often (KilledWorker) or a bug
                kind = type(exc).__name__
                states[spec.name] = {"state": "lost" if kind == "KilledWorker" else "error",
                                     "status": "error", "reason": f"{kind}: {exc}"}
                log.error("flight %s: %s", spec.name, states[spec.name]["reason"])
            write()
            if on_flight is not None:
                on_flight(spec.name, states[spec.name])
            report(min(pending, workers or pending))
    finally:
        _close(client, cluster)
    return doc


def _close(client, cluster) -> None:
    """Close the client and the embedded cluster; a cluster slow to stop on a loaded machine
    (workers killed by their nannies after a timeout) does not fail a finished campaign."""
    for thing in (client, cluster):
        if thing is None:
            continue
        try:
            thing.close(timeout=30)
        except (TimeoutError, OSError, RuntimeError) as exc:
            log.warning("closing the Dask %s: %s: %s", type(thing).__name__,
                        type(exc).__name__, exc)


def _counts(states: Mapping[str, Mapping[str, Any]], total: int) -> dict[str, int]:
    done = sum(s.get("state") == "done" for s in states.values())
    failed = sum(s.get("state") in ("error", "lost") for s in states.values())
    return {"done": done, "failed": failed, "total": total,
            "implausible": sum(s.get("status") == "implausible" for s in states.values())}


def _write_catalog(specs: Sequence[FlightSpec], out: Path,
                   states: Mapping[str, Mapping[str, Any]]) -> None:
    import pandas as pd

    from recon.io import write_table

    rows = []
    for spec in specs:
        st = states.get(spec.name)
        if st is None:
            continue
        doc = None
        if st.get("state") == "done":
            try:
                doc = json.loads((out / spec.name / "result.json").read_text())
            except (OSError, ValueError):
                doc = None
        rows += catalog_rows(spec.name, doc, truth=read_truth(spec), wall_s=st.get("wall_s"),
                             status=st.get("status"), reason=st.get("reason"))
    frame = pd.DataFrame(rows, columns=list(CATALOG_COLUMNS))
    for c in ("truth", "map", "median", "ci68_lo", "ci68_hi", "ci95_lo", "ci95_hi", "stderr",
              "z", "wall_s"):
        frame[c] = pd.to_numeric(frame[c], errors="coerce").astype(float)
    for c in ("in68", "in95"):
        frame[c] = frame[c].astype("boolean")
    frame["seed"] = pd.to_numeric(frame["seed"], errors="coerce").astype("Int64")
    write_table(frame, out / "catalog.parquet", dict(CATALOG_COLUMNS))
