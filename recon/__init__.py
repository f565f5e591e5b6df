"""Post-flight reconstruction: telemetry, sensor models, the reconstruction problem, optimizer
and sampler engines, result files, and the ``dockrecon`` command line (:mod:`recon.app.cli`)."""
__all__: list[str] = []
