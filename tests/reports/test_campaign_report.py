"""The campaign report (reports/builders/campaign.py) from a campaign directory written by
recon.app.campaign's own catalog writer: flights not reconstructed lead and are highlighted, one
forest panel per free parameter with every flight, the truth counts, a refused flight without
parameters."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np

from recon.app.campaign import FlightSpec, _counts, _write_catalog
from reports.build import rebuild_report

ROOT = Path(__file__).resolve().parents[2]
STORED = ROOT / "tests" / "reports" / "data" / "reconstruction" / "result.json"


def _campaign(out: Path, n: int) -> dict:
    """``n`` flights: the stored result with its intervals shifted by seeded amounts (the
    truth is the unshifted median, so z is the shift), flight 1 implausible, one refused."""
    stored = json.loads(STORED.read_text())
    rng = np.random.default_rng(4)
    truth = {k: p["median"] for k, p in stored["parameters"].items()}
    specs, states = [], {}
    for i in range(n):
        name = f"f{i}"
        doc = copy.deepcopy(stored)
        for p in doc["parameters"].values():
            if p["prior"]["kind"] == "fixed":
                continue
            shift = rng.normal() * 0.5 * (p["ci68"][1] - p["ci68"][0])
            for k in ("map", "median"):
                p[k] += shift
            p["ci68"] = [c + shift for c in p["ci68"]]
            p["ci95"] = [c + shift for c in p["ci95"]]
        if i == 1:
            doc["status"], doc["status_reason"] = "implausible", "cost 3000 exceeds 431"
        (out / name).mkdir(parents=True)
        (out / name / "result.json").write_text(json.dumps(doc))
        tp = out / f"{name}.truth.json"
        tp.write_text(json.dumps({"parameters": truth}))
        specs.append(FlightSpec(name=name, telemetry=("x.parquet",), scenario="s.toml",
                                truth=str(tp)))
        states[name] = {"state": "done", "status": doc.get("status", "ok"),
                        "reason": doc.get("status_reason", ""), "wall_s": 60.0 + i}
    specs.append(FlightSpec(name="broken", telemetry=("empty.parquet",), scenario="s.toml"))
    states["broken"] = {"state": "error", "status": "error",
                        "reason": "empty.parquet: the file is empty", "wall_s": 0.1}
    _write_catalog(specs, out, states)
    doc = {"kind": "campaign", "flights": {s.name: {"spec": s.to_dict(), **states[s.name]}
                                           for s in specs},
           "settings": {"manifest": "m.toml", "workers": 2, "scheduler": None},
           "counts": _counts(states, len(specs)), "versions": {}, "wall_s": 120.0}
    (out / "campaign.json").write_text(json.dumps(doc))
    return doc


def test_campaign_report_leads_with_the_flights_not_reconstructed(tmp_path):
    _campaign(tmp_path, 4)
    paths = rebuild_report(tmp_path)
    assert {p.name for p in paths} == {"report.html", "report.pdf"}
    html = (tmp_path / "report.html").read_text()
    assert "Docking reconstruction campaign (with failures)" in html
    first = html.index("2 flight(s) not reconstructed")
    assert first < html.index("Parameters across flights")
    assert "f1 (implausible: cost 3000 exceeds 431)" in html
    assert "broken (error: empty.parquet: the file is empty)" in html
    # 12 free parameters, 6 panels a figure: two forest figures; the catalog table is printed
    assert html.count('alt="Each flight') == 2 and "Truth inside the intervals" in html
    assert "Catalog" in html and (tmp_path / "report.pdf").read_bytes()[:4] == b"%PDF"


def test_large_campaigns_get_distributions_not_rows(tmp_path, monkeypatch):
    """Beyond FOREST_MAX flights the panels are histograms and the catalog is not printed."""
    import reports.builders.campaign as camp

    monkeypatch.setattr(camp, "FOREST_MAX", 3)
    monkeypatch.setattr(camp, "CATALOG_TABLE_MAX", 3)
    _campaign(tmp_path, 4)
    rebuild_report(tmp_path, ("html",))
    html = (tmp_path / "report.html").read_text()
    assert html.count('alt="Distribution over flights of the median') == 2
    assert "too many to print" in html
