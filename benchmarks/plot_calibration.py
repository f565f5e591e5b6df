"""The figure of the reconstruction's calibration (``docs/theory/reconstruction.rst``), drawn from
the stored results of calibration studies (``benchmarks/results/calibration_*.json``).

Usage::

    .venv/bin/python benchmarks/plot_calibration.py "LABEL=FILE[+FILE...]" ... --output FIG.png

Each ``LABEL=FILE`` is one study; a study run in parts (``--only``) is given as its parts
joined by ``+`` (their flights are disjoint, as ``dockrecon study merge`` requires). The flights
are scored again with the code the study itself uses (:func:`recon.calibration.coverage`), so
the figure and the tables of ``benchmarks/README.md`` come from the same numbers. Three panels (coverage above, the two distributions below):

* coverage of each free parameter's 68 % and 95 % interval, with the band of two binomial
  sampling errors about the nominal level;
* the empirical distribution of the truth's likelihood-ratio statistic
  ``2 (cost(truth) - best cost)`` against chi-square with as many degrees of freedom as free
  parameters (what it follows when the likelihood is right and the search found the optimum);
* the empirical distribution of the posterior mass at higher density than the truth's
  (``hpd.mass_above``) against the uniform (what it follows when the posterior is calibrated),
  for the studies that scored it.

Prints each study's summary (pooled coverage, the likelihood-ratio statistic's mean and its
Kolmogorov-Smirnov probability against chi-square, the HPD masses' against the uniform).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def load_study(spec: str) -> tuple[str, list[dict], list[str]]:
    """``LABEL=FILE[+FILE...]`` -> (label, the flights' records, the free parameters)."""
    if "=" not in spec:
        raise SystemExit(f"error: {spec!r}: expected LABEL=FILE[+FILE...]")
    label, files = spec.split("=", 1)
    flights: list[dict] = []
    free: list[str] | None = None
    for name in files.split("+"):
        path = Path(name)
        if not path.is_file():
            raise SystemExit(f"error: {path}: no such file")
        d = json.loads(path.read_text())
        names = list(d.get("free") or d["table"])
        if free is not None and names != free:
            raise SystemExit(f"error: {path}: other free parameters than the study's first part")
        free = names
        seen = {f["flight"] for f in flights}
        again = [f["flight"] for f in d["flights"] if f["flight"] in seen]
        if again:
            raise SystemExit(f"error: {path}: flights {', '.join(again)} are in two parts")
        flights += d["flights"]
    return label, flights, free or []


def main(argv=None) -> int:
    sys.path.insert(0, str(ROOT))
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from scipy.stats import chi2

    from recon.calibration import coverage

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("studies", nargs="+", help="LABEL=FILE[+FILE...]")
    ap.add_argument("--output", "-o", type=Path, required=True)
    args = ap.parse_args(argv)
    studies = [load_study(s) for s in args.studies]

    fig = plt.figure(figsize=(10.0, 9.0))
    grid = fig.add_gridspec(2, 2, height_ratios=[1.0, 1.0])
    ax_cov = fig.add_subplot(grid[0, :])
    ax_lr = fig.add_subplot(grid[1, 0])
    ax_hpd = fig.add_subplot(grid[1, 1])
    markers = ["o", "s", "^", "D", "v"]
    colors = ["tab:blue", "tab:orange", "tab:green", "tab:purple", "tab:brown"]
    n_st = len(studies)
    names = studies[0][2]
    x = np.arange(len(names))
    for level, color in ((0.68, "tab:blue"), (0.95, "tab:red")):
        ns = [len(fl) for _, fl, _ in studies]
        se = np.sqrt(level * (1 - level) / min(ns))
        ax_cov.axhspan(level - 2 * se, level + 2 * se, color=color, alpha=0.10, lw=0)
        ax_cov.axhline(level, color=color, lw=0.8)
    kmax = 0
    for i, (label, flights, free) in enumerate(studies):
        cov = coverage(flights, free)
        tab = cov["table"]
        off = (i - 0.5 * (n_st - 1)) * 0.22
        m = markers[i % len(markers)]
        ax_cov.plot(x + off, [tab[n]["coverage68"] for n in names], m, color="tab:blue",
                    ms=5, mfc="white" if i else "tab:blue")
        ax_cov.plot(x + off, [tab[n]["coverage95"] for n in names], m, color="tab:red",
                    ms=5, mfc="white" if i else "tab:red")
        ax_cov.plot([], [], m, color="0.3", mfc="white" if i else "0.3",
                    label=f"{label} ({cov['n_flights']} flights)")
        pooled = cov["pooled"]
        line = (f"{label}: {cov['n_flights']} flights, pooled coverage "
                f"{pooled['coverage68']:.3f} / {pooled['coverage95']:.3f}")
        lr = np.sort([f["lr"] for f in flights if f.get("lr") is not None])
        if lr.size:
            k = len(free)
            kmax = max(kmax, k)
            ecdf = np.arange(1, lr.size + 1) / lr.size
            ax_lr.step(lr, ecdf, where="post", marker=m, ms=3, label=label,
                       color=colors[i % len(colors)])
            st = pooled["likelihood_ratio"]
            line += (f"; likelihood-ratio statistic mean {st['mean']:.1f} (chi2_{k}: {k}), "
                     f"KS p {st['chi2_p']:.2f}")
        mass = np.sort([f["hpd"]["mass_above"] for f in flights if f.get("hpd")])
        if mass.size:
            ecdf = np.arange(1, mass.size + 1) / mass.size
            ax_hpd.step(mass, ecdf, where="post", marker=m, ms=3, label=label,
                        color=colors[i % len(colors)])
            line += (f"; HPD mass above the truth: mean {cov['hpd']['mass_above_mean']:.2f}, "
                     f"KS p {cov['hpd']['uniform_p']:.2f} against the uniform")
        print(line)
    ax_cov.set_xticks(x, names, rotation=40, ha="right")
    ax_cov.set_ylim(0.3, 1.04)
    ax_cov.set_ylabel("share of flights whose interval holds the truth")
    ax_cov.set_title("coverage of the 68 % (blue) and 95 % (red) intervals\n"
                     "(bands: nominal +- 2 binomial sampling errors)", fontsize=10)
    ax_cov.legend(loc="lower left", fontsize=8)
    if kmax:
        g = np.linspace(0.0, chi2.ppf(0.999, kmax), 300)
        ax_lr.plot(g, chi2.cdf(g, kmax), "k-", lw=1.2, label=f"chi-square, {kmax} dof")
    ax_lr.set_xlabel("2 (cost(truth) - best cost)")
    ax_lr.set_ylabel("cumulative share of flights")
    ax_lr.set_title("the truth's likelihood-ratio statistic", fontsize=10)
    ax_lr.legend(loc="lower right", fontsize=8)
    ax_hpd.plot([0, 1], [0, 1], "k-", lw=1.2, label="uniform")
    ax_hpd.set_xlim(0, 1)
    ax_hpd.set_ylim(0, 1)
    ax_hpd.set_xlabel("posterior mass at higher density than the truth's")
    ax_hpd.set_ylabel("cumulative share of flights")
    ax_hpd.set_title("the truth's highest-density rank", fontsize=10)
    ax_hpd.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    args.output.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.output, dpi=100)
    plt.close(fig)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
