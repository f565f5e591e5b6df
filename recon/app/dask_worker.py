"""Set-up of the embedded cluster's worker processes: a Dask worker preload.

:func:`recon.app.campaign.run_campaign` starts its :class:`distributed.LocalCluster` with
``preload=["recon.app.dask_worker"]``, so every worker process (a restarted one too) runs
:func:`dask_setup` when it starts.

Ctrl-C at a terminal sends SIGINT to the whole foreground process group, the workers included.
The client owns the interruption: it stops the campaign, keeps every finished flight and
closes the cluster, whose nannies stop the workers. A worker that took the SIGINT itself would
die mid-task in its event loop and log tracebacks of broken connections on the user's terminal
(the product standard: no traceback unless ``-v``). So the workers ignore SIGINT, and, unless
the client runs verbose (``DOCKRECON_DASK_QUIET=0`` in the workers' environment), their
``distributed`` and ``tornado`` loggers report only CRITICAL.

Only the embedded cluster gets this; the workers of an existing cluster (``--scheduler``)
belong to whoever started them.
"""
from __future__ import annotations

import logging
import os
import signal
import threading

#: environment variable the client sets for its workers: "1" quiet, "0" verbose
QUIET_ENV = "DOCKRECON_DASK_QUIET"
#: the loggers of the Dask / tornado stack a quiet worker silences
CHATTY_LOGGERS = ("distributed", "tornado", "tornado.application", "bokeh")


def quiet_logs(quiet: bool) -> None:
    """Set the Dask / tornado loggers of this process to CRITICAL (quiet) or INFO."""
    for name in CHATTY_LOGGERS:
        logging.getLogger(name).setLevel(logging.CRITICAL if quiet else logging.INFO)


def dask_setup(worker) -> None:  # noqa: ARG001  (Dask's preload signature)
    """Ignore SIGINT in this worker process and quiet its logs (module docstring)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    quiet_logs(os.environ.get(QUIET_ENV, "1") != "0")
