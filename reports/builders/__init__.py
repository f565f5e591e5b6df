"""Report builders, one module per result kind, and :data:`BUILDERS`: the builder of each
kind, ``builder(result document, path of the result file) -> Report``, which
:func:`reports.build.rebuild_report` picks by the result's ``"kind"`` alone."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from reports.builders import (calibration, campaign, fleet, hysteresis, reconstruction,
                              resonance, resonance_coupling, rig)
from reports.document import Report

__all__ = ["BUILDERS"]

#: result kind -> its report builder
BUILDERS: dict[str, Callable[[dict, Path], Report]] = {
    "calibration": calibration.build_calibration_report,
    "campaign": campaign.build_campaign_report,
    "fleet": fleet.build_fleet_report,
    "hysteresis_fit": hysteresis.build_hysteresis_report,
    "reconstruction": reconstruction.build_reconstruction_report,
    "resonance": resonance.build_resonance_report,
    "resonance_coupling": resonance_coupling.build_coupling_report,
    "rig": rig.build_rig_report,
}
