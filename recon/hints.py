"""Which number of the unit would make an implausible fit plausible: a score test of the
parameters the run left at the scenario's values.

When the best fit of a record exceeds the plausible cost (:func:`identification.engines.
gof_limit`), either the search missed the basin or the model does not describe the record. A
unit that is not the preset is the common second case: its brake slips higher, a spring
stage is stiffer. For each parameter of the unit that the run did not free
(:attr:`models.unit.DockingUnit.parameters`, one name per packed number: the scenario
path rather than its short-name alias), :func:`mechanism_hints` takes the
whitened residuals ``r`` at the best fit and their derivative ``j`` in that parameter (a
central difference of 2 % of its value, the width an event-driven model's secant needs), and
asks how far the cost falls when that parameter is freed and the free ones re-optimized with
it, to first order (Gauss-Newton; a score test): with ``J`` the free parameters' Jacobian
(data and prior rows), ``P`` the projection off its columns,

    reduction = (P j . P r)^2 / (2 |P j|^2),    step = -(P j . P r) / |P j|^2.

The parameters are ranked by that reduction; each comes with the change it asks for
(relative to its value: a change of several times the value says the model's structure, not
that number, is wrong) and the channels whose residuals carry the reduction. The reduction is
a local, linear estimate: a hint at what to free in the next run, not a fit.
"""
from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["mechanism_hints", "hint_text", "REL_STEP"]

#: central-difference step of each candidate parameter, fraction of its value
REL_STEP = 0.02


def mechanism_hints(problem, result, *, top: int = 5, rel_step: float = REL_STEP
                    ) -> dict[str, Any] | None:
    """The parameters of the unit not freed in ``problem`` ranked by the cost reduction
    freeing each would bring (module docstring), at ``result``'s best fit; None when the
    forward model is not a unit's (nothing to rank) or the fit has no Jacobian."""
    fwd = problem.forward
    if not hasattr(fwd, "with_names") or result.jacobian is None:
        return None
    unit = fwd.unit
    taken = set(problem.space.names)
    cands = [n for n in unit.parameters if n not in taken and n not in unit.initial_conditions]
    cands.sort(key=lambda n: "." not in n)      # scenario paths before the aliases
    # one name per packed entry (a short name and its scenario path are one number), and
    # none of the entries the run already sets
    index = getattr(fwd.runner, "known_parameters", None) or {}
    used = {index.get(n) for n in problem.forward_names}
    kept = []
    for n in cands:
        i = index.get(n, n)
        if i not in used:
            used.add(i)
            kept.append(n)
    cands = kept
    if not cands:
        return None
    ext = fwd.with_names(problem.forward_names + tuple(cands))
    base = np.array([ext.base[n] for n in cands])
    h = rel_step * np.where(base != 0.0, np.abs(base), 1.0)
    k = len(cands)
    extra = np.repeat(base[None, :], 1 + 2 * k, axis=0)
    extra[1 + np.arange(k), np.arange(k)] += h
    extra[1 + k + np.arange(k), np.arange(k)] -= h
    x = np.asarray(result.x_opt, float)          # where the Jacobian was taken
    r_all = problem.residuals_with(ext, extra, x)
    r0 = r_all[0]
    if not np.all(np.isfinite(r0)):
        return None
    sp = problem.space
    r_prior = sp.prior_residuals(x)
    J = result.jacobian
    m = r0.size
    r = np.concatenate([r0, r_prior])
    Q, _ = np.linalg.qr(J)
    r_perp = r - Q @ (Q.T @ r)
    slices = problem.bound.channel_slices()
    seen: list[str] = []
    rows: list[dict[str, Any]] = []
    for i, name in enumerate(cands):
        up, dn = r_all[1 + i], r_all[1 + k + i]
        if not (np.all(np.isfinite(up)) and np.all(np.isfinite(dn))):
            continue
        seen.append(name)
        j = np.concatenate([(up - dn) / (2.0 * h[i]), np.zeros(r_prior.size)])
        j_perp = j - Q @ (Q.T @ j)
        b = float(j_perp @ j_perp)
        if not b > 1e-300:
            continue
        a = float(j_perp @ r_perp)
        step = -a / b
        after = r_perp + step * j_perp
        channels = {c: 0.5 * float(r_perp[sl] @ r_perp[sl] - after[sl] @ after[sl])
                    for c, sl in slices.items() if sl.stop <= m}
        rows.append({"name": name, "unit": unit.parameters[name], "value": float(base[i]),
                     "cost_reduction": 0.5 * a * a / b, "step": step,
                     "relative_step": step / abs(base[i]) if base[i] != 0.0 else None,
                     "channels": dict(sorted(channels.items(), key=lambda kv: -kv[1]))})
    rows.sort(key=lambda d: -d["cost_reduction"])
    best = float(result.diagnostics.get("optimizer", {}).get("best_cost", 0.5 * r @ r))
    return {"best_cost": best, "considered": len(seen), "evaluations": 1 + 2 * k,
            "rel_step": rel_step, "parameters": rows[:top]}


def hint_text(hints: dict[str, Any] | None) -> str | None:
    """One sentence naming the parameter whose freeing would lower the cost most, for the
    status reason; None without one."""
    if not hints or not hints.get("parameters"):
        return None
    p = hints["parameters"][0]
    rel = p.get("relative_step")
    change = f", a change of {100 * rel:+.0f} % of {p['value']:.4g}" if rel is not None else ""
    others = ", ".join(q["name"] for q in hints["parameters"][1:3])
    return (f"freeing {p['name']} would lower the cost most, by about "
            f"{p['cost_reduction']:.0f} to first order{change}"
            + (f" (then {others})" if others else ""))
