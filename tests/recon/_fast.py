"""A run configuration that reconstructs a shipped 5-s flight in well under a minute, shared
by the campaign, study and benchmark-script tests: the shipped priors and sensor model with a
small screen, a short polish and few importance draws (numbers far from calibrated; the tests
that use it compare runs with each other, not with the truth)."""
from __future__ import annotations

from pathlib import Path

FLIGHTS = Path(__file__).resolve().parents[2] / "telemetry_samples" / "flights"

#: the settings :func:`fast_config` writes over the source's
FAST = {"screen": "32", "keep": "2", "max_nfev": "12", "pre_nfev": "6", "importance": "200",
        "draws": "10", "search_retries": "0"}


def fast_config(tmp_path: Path, name: str = "run.toml", *, source: Path | None = None,
                extra: dict[str, str] | None = None) -> Path:
    """``source`` (default: the shipped probe-cone flights' run.toml) with the settings of
    :data:`FAST` and then ``extra`` (key: value as TOML text, e.g. ``{"mcmc_below_ess": "1"}``),
    written to ``tmp_path / name``. Each key must be set on exactly one line of ``source``:
    a key renamed there fails here, not as a silently slow or different test."""
    settings = {**FAST, **(extra or {})}
    text = (source or FLIGHTS / "run.toml").read_text()
    out, seen = [], {key: 0 for key in settings}
    for line in text.splitlines():
        key = line.split("=")[0].strip()
        if key in settings and "=" in line:
            out.append(f"{key} = {settings[key]}")
            seen[key] += 1
        else:
            out.append(line)
    wrong = {key: n for key, n in seen.items() if n != 1}
    if wrong:
        raise ValueError(f"{source or FLIGHTS / 'run.toml'}: keys not set on exactly one line "
                         f"(times found): {wrong}")
    path = tmp_path / name
    path.write_text("\n".join(out) + "\n")
    return path
