"""Declared schema of the modes file of a non-own resonance test (:mod:`models.schema`;
``dockrecon identify resonance-coupling RECORD --modes MODES.toml``).

The reader is :func:`identification.resonance.pipeline.coupling_settings`, whose key sets
(``MODES_KEYS``, ``MODE_S_KEYS``) are these declarations' names; the bounds are the ones it
checks (it does not apply the physical ranges of
:data:`models.limits.RANGES`, hence ``~``).
"""
from __future__ import annotations

from models.schema import Table, keys

__all__ = ["MODE_S", "MODES"]

MODE_S = Table("mode_s", "Own characteristics of the observed mode s (linear).", keys("""
mass      | number | kg    | required | >0~  | modal mass mu_s
stiffness | number | N/m   | required | >0~  | modal stiffness gamma_s
damping   | number | N s/m | required | >=0~ | modal damping lambda_s
"""), required=True, source=False)

#: the modes file: the quasi-normal coordinates q = modal_matrix @ X and the resonance
MODES = Table("modes", "Modes of a non-own (coupling) resonance test "
              "(identification.resonance.pipeline.coupling_settings).", keys("""
modal_matrix | rows    | -     | required | -       | N x N matrix (N >= 2, not singular)
| whose columns are the mode shapes: q = modal_matrix @ X
coordinates  | strings | -     | required | -       | the N distinct record columns of q
p            | integer | -     | required | >=0     | the excited mode (a column of the modal
| matrix, 0-based)
s            | integer | -     | required | >=0     | the observed mode (another column)
order        | integer | -     | required | [2, 3]  | order l of the superharmonic resonance
| l nu_p = omega_s
frequency    | number  | rad/s | -        | >0~     | the excitation frequency nu_p (optional)
""") + (MODE_S,), source=False)
