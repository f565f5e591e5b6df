"""``dockrecon study calibration`` and ``dockrecon study merge``: a calibration study
(:mod:`recon.calibration`) run as a campaign on a Dask cluster, resumed, and joined from parts.

A study longer than one sitting. The draws are sequential (step 1), so flight ``i`` is the
same draw, recorded with the same seed and reconstructed with the same seed, whatever part of
the study is run: ``only`` (``--only 20-39``) runs a subset of the ``flights`` flights, and
:func:`merge_studies` (``dockrecon study merge``) joins the ``calibration.json`` of parts run
apart (other directories, other machines, other days) into the table of their union. It
refuses parts of different studies (seed, records, options, free parameters, scenario or
configuration) and a flight scored in two parts; parts run with different ``flights`` are
parts of one study.
"""
from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from models.errors import InputError
from recon.calibration import (HORIZON, RECORDS, StudySettings, coverage, draw_flights,
                               flight_index, flight_recorder, format_only, model_window,
                               record_flights, score_flight, study_problem)
from recon.results import read_posterior

__all__ = ["run_study", "calibrate_one", "merge_studies"]


def calibrate_one(spec, out: str) -> dict:
    """The study's per-flight job (a Dask task): the campaign's reconstruction
    (:func:`recon.app.campaign.reconstruct_one`), then the flight scored against its truth
    (returned under ``"score"``)."""
    from recon.app.campaign import reconstruct_one

    stamp = reconstruct_one(spec, out)
    if stamp.get("status") == "error":
        return stamp
    return {**stamp, "score": _score(spec, Path(out))}


def _score(spec, out: Path) -> dict[str, Any]:
    from recon.app.campaign import read_truth
    from recon.config import load_scenario

    unit = load_scenario(spec.scenario)[0]
    result = json.loads((out / spec.name / "result.json").read_text())
    problem = study_problem(spec)
    nc = out / spec.name / "posterior.nc"
    posterior = read_posterior(nc, problem.names) if nc.exists() else None
    return score_flight(spec, result, read_truth(spec), unit.initial_conditions,
                        posterior=posterior, problem=problem)


def _study_config(cfg_path: str, unit, document: Mapping[str, Any] | None = None):
    """The run configuration of a study, its free parameters and the free numbers of the
    unit it draws by their scenario paths (in ``document``, the scenario's tables); refused
    when it does not give every initial condition (free or fixed) or frees a number of the
    unit by anything but its path (recon.calibration, 'Scope')."""
    from recon.calibration import scenario_paths
    from recon.config import RunConfig
    from recon.io import load_toml

    try:
        cfg = RunConfig.from_dict(load_toml(cfg_path))
    except InputError as exc:
        raise exc.with_source(cfg_path)
    free = list(cfg.space.free_names)
    extra = [n for n in free if n not in unit.initial_conditions and n != "clock_offset"]
    try:
        mechanism = scenario_paths(document or {}, extra)
    except InputError as exc:
        raise exc.with_source(cfg_path)
    missing = [n for n in unit.initial_conditions if n not in cfg.space.names]
    if missing:
        raise InputError(f"no {', '.join(missing)}: a calibration study draws every initial "
                         "condition of the flight (give the missing ones as fixed or with a "
                         "prior)", key="parameters", source=cfg_path)
    return cfg, free, mechanism


def run_study(settings: StudySettings, out: str | os.PathLike, *, workers: int | None = None,
              scheduler: str | None = None, resume: bool = False,
              progress: Callable[[dict], None] | None = None,
              dashboard: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Run a calibration study into ``out`` (module docstring); returns the
    ``calibration.json`` document. ``dashboard``: as :func:`recon.app.campaign.run_campaign`
    has it."""
    from recon.app.campaign import FlightSpec, run_campaign
    from recon.config import load_scenario
    from identification.provenance import versions
    from recon.io import write_json

    out = Path(out)
    path = out / "calibration.json"
    if resume and path.exists():
        try:
            before = json.loads(path.read_text()).get("settings", {}).get("study")
        except (OSError, ValueError):
            before = None
        if before is not None and before != json.loads(json.dumps(settings.to_dict())):
            raise InputError("holds a study with other settings (scenario, configuration, "
                             "flights, seed, records or options): resume it with those, or "
                             "use another directory", key="--resume", source=str(out))
    if settings.records not in RECORDS:
        raise InputError(f"must be one of {', '.join(RECORDS)}", key="--records")
    unit, scenario, _ = load_scenario(settings.scenario)
    try:                                # a unit without a flight recorder is refused up front
        flight_recorder(unit)
    except InputError as exc:
        raise exc.with_source(settings.scenario)
    from recon.calibration import scenario_for_draws
    from recon.config import scenario_document

    document = scenario_document(settings.scenario)
    cfg, free, mechanism = _study_config(settings.config, unit, document)
    # each flight's scenario holds its draw of the unit's freed numbers ('Scope')
    scenario_for = scenario_for_draws(unit, document, mechanism) if mechanism else None
    window = model_window(cfg)
    t0 = time.time()
    flights = draw_flights(unit, scenario, cfg.space, settings.flights, settings.seed,
                           records=settings.records, window=window, scenario_for=scenario_for)
    if settings.only is not None:       # every draw made, in order, so flight i is the same
        keep = set(settings.only)
        flights = [f for f in flights if f["index"] in keep]
    flights = record_flights(unit, scenario, flights, out / "telemetry", settings, window,
                             scenario_for=scenario_for)
    specs, truths = [], {}
    for f in flights:
        # the recorder's truth file (events, recorder settings) with the study's draw added
        truth_path = Path(f["telemetry"][0]).with_name(f"{f['name']}.truth.json")
        tdoc = json.loads(truth_path.read_text())
        tdoc.update(parameters=f["truth"], draw=f["draw"], tries=f["tries"],
                    capture_t=f["capture_t"])
        write_json(tdoc, truth_path)
        specs.append(FlightSpec(name=f["name"], telemetry=tuple(f["telemetry"]),
                                scenario=settings.scenario, config=settings.config,
                                truth=str(truth_path), seed=f["index"],
                                options=dict(settings.options)))
        truths[f["name"]] = f
    scores: dict[str, dict[str, Any]] = {}

    def write(doc: Mapping[str, Any] | None = None) -> dict[str, Any]:
        records = []
        for s in specs:
            sc = scores.get(s.name)
            if sc is not None:
                f = truths[s.name]
                records.append({"flight": s.name, "tries": f["tries"],
                                "capture_t": f["capture_t"], **sc})
        body = {"kind": "calibration", **coverage(records, free), "free": free,
                "flights": records,
                "settings": {"study": settings.to_dict(), "horizon": HORIZON,
                             "inputs": _input_digests(settings),
                             "selection": (f"prior draws that capture within {HORIZON:g} s "
                                           "of the start plane" if settings.records ==
                                           "realistic" else "prior draws that capture >= 1 s "
                                           "before the window end"),
                             "workers": workers, "scheduler": scheduler},
                "seed": settings.seed, "versions": versions(),
                "wall_s": round(time.time() - t0, 1),
                "flights_resumed": None if doc is None else sum(
                    1 for f in doc["flights"].values() if f.get("resumed")),
                "campaign": None if doc is None else doc.get("counts")}
        write_json(body, path)
        return body

    by_name = {s.name: s for s in specs}

    def on_flight(name: str, state: Mapping[str, Any]) -> None:
        if state.get("resumed"):
            # kept by --resume, reported before the other flights start: scored again here
            # (a pure function of its result, truth and telemetry), so that the table
            # written after every flight of this sitting counts it too (an interrupted
            # sitting left a table of its own flights only, before this)
            scores[name] = state.get("score") or _score(by_name[name], out)
        elif state.get("score") is not None:
            scores[name] = state["score"]
        else:
            return
        write()

    doc = run_campaign(specs, out, calibrate_one, workers=workers, scheduler=scheduler,
                       resume=resume, settings={"study": settings.to_dict()},
                       progress=progress, on_flight=on_flight, dashboard=dashboard)
    return write(doc)


def _file_digest(path: str) -> str | None:
    """SHA-256 of a file as the campaign's ``--resume`` counts it (a TOML file by its parsed
    values, so an edit of its comments does not count: :func:`recon.app.campaign.spec_digest`),
    or None when it cannot be read."""
    import hashlib

    from recon.app.campaign import _file_bytes

    try:
        return hashlib.sha256(_file_bytes(path, True)).hexdigest()
    except OSError:
        return None


#: how ``settings.inputs`` digests its files ("values": a TOML file by its parsed tables);
#: parts that recorded their digests otherwise (the first parts, by bytes) are compared by
#: file name
_DIGEST_BY = "values"


def _input_digests(settings: StudySettings) -> dict[str, str | None]:
    """The scenario's and the run configuration's SHA-256 (what :func:`merge_studies`
    compares: the paths differ between the machines and directories the parts ran in)."""
    return {"scenario": _file_digest(settings.scenario),
            "config": _file_digest(settings.config), "by": _DIGEST_BY}


#: study settings that parts of one study share. ``only`` differs between them, and so may
#: ``flights``: the draws are made in order, so the first 20 flights of a 40-flight study are
#: the flights of the 20-flight study with the same seed, and a study can grow by parts
_SAME_STUDY = ("seed", "records", "options")


def _read_part(path: Path) -> tuple[Path, dict[str, Any]]:
    from recon.io import read_json

    file = path / "calibration.json" if path.is_dir() else path
    if not file.exists():
        raise InputError("no calibration.json (not a calibration study's directory?)",
                         source=str(path))
    doc = read_json(file)
    if not isinstance(doc, dict) or doc.get("kind") != "calibration":
        raise InputError("not a calibration study's calibration.json", source=str(file))
    for key in ("flights", "free", "settings"):
        if key not in doc:
            raise InputError(f"has no {key!r} (an incomplete or foreign file)", key=key,
                             source=str(file))
    return file, doc


def merge_studies(parts: Sequence[str | os.PathLike], out: str | os.PathLike
                  ) -> dict[str, Any]:
    """Join the parts of one calibration study (module docstring, 'A study longer than one
    sitting') into ``out``: ``calibration.json`` with the coverage of the union of their
    scored flights (:func:`coverage`), the union of their catalogs (``catalog.parquet``,
    when every part has one), and ``settings.merged_from`` with each part's file, flights,
    versions and wall time. Returns the document.

    Parts of different studies are refused, naming the file and the setting; parts with
    different ``flights`` are parts of one study (the draws are made in order), and the
    merged study has the largest. The scenario and the configuration are compared by their
    SHA-256 where both parts recorded it the same way (a TOML file by its values, as the
    campaign's ``--resume`` counts it), else by file name. Flights are matched by their index
    (``calNN``), so a flight scored in two parts is refused.
    """
    import pandas as pd

    from recon.app.campaign import CATALOG_COLUMNS
    from identification.provenance import versions
    from recon.io import write_json, write_table

    if len(parts) < 2:
        raise InputError("needs at least two parts of a study to merge", key="PARTS")
    read = [_read_part(Path(p)) for p in parts]
    out = Path(out)
    if any(f.parent.resolve() == out.resolve() for f, _ in read):
        raise InputError("is one of the parts: merge into a new directory", source=str(out))
    first_file, first = read[0]
    s0 = first["settings"].get("study") or {}
    records: dict[str, dict[str, Any]] = {}
    origin: dict[str, Path] = {}
    merged_from = []
    for file, doc in read:
        st = doc["settings"].get("study") or {}
        for key in _SAME_STUDY:
            if st.get(key) != s0.get(key):
                raise InputError(f"is part of another study: {key} {st.get(key)!r} against "
                                 f"{s0.get(key)!r} in {first_file}", key=key, source=str(file))
        if doc["free"] != first["free"]:
            raise InputError(f"frees {doc['free']} against {first['free']} in {first_file}",
                             key="free", source=str(file))
        dig, dig0 = doc["settings"].get("inputs") or {}, first["settings"].get("inputs") or {}
        for key in ("scenario", "config"):
            if dig.get(key) and dig0.get(key) and dig.get("by") == dig0.get("by"):
                same = dig[key] == dig0[key]
            else:
                same = Path(str(st.get(key))).name == Path(str(s0.get(key))).name
            if not same:
                raise InputError(f"was made with another {key} than {first_file} "
                                 f"({st.get(key)} against {s0.get(key)})", key=key,
                                 source=str(file))
        for rec in doc["flights"]:
            name = rec["flight"]
            index = flight_index(name)
            if index is None:
                raise InputError(f"has a flight {name!r} that no study drew (calNN)",
                                 key="flights", source=str(file))
            if index in records:
                raise InputError(f"scores flight {name}, which {origin[index]} scores too",
                                 key=name, source=str(file))
            records[index] = rec
            origin[index] = file
        merged_from.append({"file": str(file.resolve()), "only": st.get("only"),
                            "flights": [r["flight"] for r in doc["flights"]],
                            "wall_s": doc.get("wall_s"), "versions": doc.get("versions"),
                            "campaign": doc.get("campaign")})
    recs = [records[k] for k in sorted(records)]
    free = list(first["free"])
    study = {k: v for k, v in s0.items() if k != "only"}
    catalogs = [f.parent / "catalog.parquet" for f, _ in read]
    counts: dict[str, int] | None = None
    if all(isinstance(m["campaign"], dict) for m in merged_from):
        counts = {}
        for m in merged_from:
            for k, v in m["campaign"].items():
                if isinstance(v, int):
                    counts[k] = counts.get(k, 0) + v
    study["only"] = format_only(list(records))
    study["flights"] = max(int((d["settings"].get("study") or {}).get("flights") or 0)
                           for _, d in read)
    body = {"kind": "calibration", **coverage(recs, free), "free": free, "flights": recs,
            "settings": {**{k: v for k, v in first["settings"].items()
                            if k not in ("study", "merged_from")},
                         "study": study, "merged_from": merged_from},
            "seed": first.get("seed"), "versions": versions(),
            "wall_s": round(sum(float(m["wall_s"] or 0.0) for m in merged_from), 1),
            "flights_resumed": None, "campaign": counts}
    out.mkdir(parents=True, exist_ok=True)
    if all(c.exists() for c in catalogs):
        frame = pd.concat([pd.read_parquet(c) for c in catalogs], ignore_index=True)
        write_table(frame, out / "catalog.parquet", dict(CATALOG_COLUMNS))
    write_json(body, out / "calibration.json")
    return body
