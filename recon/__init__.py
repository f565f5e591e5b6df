"""Post-flight reconstruction of a docking for any registered unit: telemetry, sensor models,
the fitted span, noise from the record, the flight problem run through the engines of
:mod:`identification`, the flight recorder, calibration studies' scoring and the result files.

The application over it (the ``dockrecon`` command, campaigns, studies, reports of results) is
:mod:`recon.app`."""
__all__: list[str] = []
