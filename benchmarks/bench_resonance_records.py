"""Wall time of ``dockrecon identify resonance`` on every shipped single-mode resonance record
(``telemetry_samples/resonance/*.csv`` with one displacement column), as a user runs it: a
fresh process each (imports included), default settings (bands of 200 bootstrap replicates,
``--refine auto``, the HTML/PDF report), the reduced mass from the record's truth file.
Prints one JSON object on its last line: the wall seconds per record and their maximum."""
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DIR = ROOT / "telemetry_samples" / "resonance"
#: the single-mode records and their truth files (the reduced mass)
RECORDS = {"asymmetric": "asymmetric", "dead_zone": "dead_zone", "jump": "jump",
           "preload": "preload", "quadratic_damping": "quadratic_damping",
           "added_mass_a": "added_mass", "added_mass_b": "added_mass"}
CLI = "import sys; from recon.app.cli import main; sys.argv[0] = 'dockrecon'; sys.exit(main())"


def run(name: str, truth: str, out: Path) -> float:
    p = json.loads((DIR / f"{truth}.truth.json").read_text())["parameters"]
    mass = p["mass"] if name != "added_mass_b" else p["mass"] + p.get("delta_mass", 0.0)
    cmd = [sys.executable, "-c", CLI, "identify", "resonance", str(DIR / f"{name}.csv"),
           "--mass", repr(float(mass)), "-o", str(out / f"{name}.json")]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{name}: exit {proc.returncode}\n{proc.stderr}")
    return wall


def main():
    walls = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, truth in RECORDS.items():
            walls[name] = round(run(name, truth, Path(tmp)), 2)
            print(f"{name}: {walls[name]} s", file=sys.stderr, flush=True)
    print(json.dumps({"wall_s": walls, "max_wall_s": max(walls.values()), "draws": 200,
                      "settings": "defaults: --refine auto, report written"}))


if __name__ == "__main__":
    main()
