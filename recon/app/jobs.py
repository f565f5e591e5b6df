"""Jobs: a result directory made whole, report included, as ``dockrecon reconstruct`` and each
flight of a campaign make it."""
from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from identification.result import Result
from models.errors import InputError
from recon.app.outputs import replaced_whole
from recon.flight import reconstruct_flight
from recon.io import write_json
from reports.build import rebuild_report

__all__ = ["reconstruct_into"]


def reconstruct_into(output: str | os.PathLike,
                     telemetry: str | os.PathLike | Sequence[str | os.PathLike],
                     scenario: Any, *, resume: bool = False, report: bool = True,
                     extra: Callable[[Result], Mapping[str, Mapping[str, Any]]] | None = None,
                     **options: Any) -> tuple[Result, list[str]]:
    """A flight's whole result directory, as ``dockrecon reconstruct`` and each flight of a
    campaign make it: :func:`recon.flight.reconstruct_flight` into a staging directory, the
    report built there, the JSON files ``extra(result)`` gives (``{file name: document}``)
    beside them, then the directory swapped in whole
    (:func:`recon.app.outputs.replaced_whole`: a kill leaves ``output`` as it was).
    ``options`` are :func:`~recon.flight.reconstruct_flight`'s. Returns the result and the
    file names of the report. An input error that names the staging directory names ``output``."""
    with replaced_whole(output, resume=resume) as stage:
        try:
            res = reconstruct_flight(telemetry, scenario, stage, resume=resume, **options)
        except InputError as exc:
            if exc.source and str(stage) in str(exc.source):
                # the staging copy of DIR's chains: named as the user knows them
                exc.source = str(exc.source).replace(str(stage), str(output)) + " (--resume)"
            raise
        names = []
        if report:
            names = [p.name for p in rebuild_report(stage)]
        for name, doc in (extra(res) if extra is not None else {}).items():
            write_json(dict(doc), Path(stage) / name)
    return res, names
