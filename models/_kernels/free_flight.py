"""Free flight of the two vehicles before the start plane: the output rows a docking kernel
writes for ``t < 0``.

A reconstruction may fit a record whose span begins before the model's ``t = 0`` (the start
plane, where the kernel's initial conditions are given). Before it the vehicles fly free and
nothing touches the docking unit, so a unit's kernel can extend its output backwards without
integrating its mechanism: the unit's mechanism channels keep their ``t = 0`` values (the
mechanism is at rest relative to its vehicle; which channels, and why each value holds, is the
unit's statement beside its call), each vehicle's body rates follow Euler's torque-free
equations backwards from their ``t = 0`` values, and every other channel is NaN (the relative
state, energies and momenta are not modelled before the start).

Used by :func:`models.probe_cone._kernels.kernel.run` and
:func:`models.peripheral._kernels.kernel.run`.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from models._kernels import NJIT
from models._kernels.rigid_body import torque_free_rates

__all__ = ["fill_before_start"]


@njit(**NJIT)
def fill_before_start(J1, JI1, J2, JI2, w1_0, w2_0, chan, held, o_t, o_ar, o_pr, out, n_pre,
                      dt_out):
    """Fill the ``n_pre`` output rows before ``t = 0`` from the row at ``t = 0``.

    Parameters
    ----------
    J1, JI1, J2, JI2 : float64[3, 3]
        Inertia [kg m^2] of the active (1) and passive (2) vehicle in body axes, and inverses.
    w1_0, w2_0 : float64[3]
        Their body rates at ``t = 0`` [rad/s].
    chan : int64[:]
        The recorded output channels (the unit's ``O_*`` indices), columns of ``out``.
    held : int64[:]
        Channels (``O_*``) that keep their ``t = 0`` value before the start.
    o_t, o_ar, o_pr : int
        The unit's ``O_*`` index of the time channel and of the first of the three active and
        of the three passive body rates.
    out : float64[n, len(chan)]
        Output rows; row ``n_pre`` is ``t = 0`` (read), rows ``0 .. n_pre - 1`` are
        ``t = -n_pre dt_out .. -dt_out`` (written).
    n_pre : int
        Rows before the start (``n_pre >= 1``).
    dt_out : float
        Output interval [s].

    Notes
    -----
    The rates are those of :func:`~models._kernels.rigid_body.torque_free_rates`,
    ``J w_dot = -w x J w`` integrated by RK4 with the step ``-dt_out``: with rates of order
    1e-2 rad/s and steps of 1e-2 s, ``|w| h`` is 1e-4 and the step error of order
    ``(|w| h)^5``, far below any gyro's resolution.
    """
    rates = np.empty((n_pre, 6))
    torque_free_rates(J1, JI1, w1_0, -dt_out, rates, 0)
    torque_free_rates(J2, JI2, w2_0, -dt_out, rates, 3)
    row0 = out[n_pre]
    for j in range(chan.shape[0]):
        c = chan[j]
        is_held = False
        for h in held:
            if c == h:
                is_held = True
        for k in range(n_pre):
            if c == o_t:
                out[k, j] = (k - n_pre) * dt_out
            elif c >= o_ar and c < o_ar + 3:
                out[k, j] = rates[k, c - o_ar]
            elif c >= o_pr and c < o_pr + 3:
                out[k, j] = rates[k, 3 + c - o_pr]
            elif is_held:
                out[k, j] = row0[j]
            else:
                out[k, j] = np.nan
