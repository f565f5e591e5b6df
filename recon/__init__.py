"""Post-flight reconstruction of a docking for any registered unit: telemetry, sensor models,
the fitted span, noise from the record, the flight problem run through the engines of
:mod:`identification`, the flight recorder, calibration studies' scoring and the result files.

The application over it (the ``dockrecon`` command, campaigns, studies, reports of results) is
:mod:`recon.app`. The Python API is here, one import line::

    from recon import reconstruct, load_result

(:mod:`recon.app.api`: :func:`reconstruct`, :func:`load_result`, :class:`Result`,
:func:`flight_parameters`). Those
names are loaded when first asked for, so that ``import recon`` or a module of the library
does not load the application.
"""
__all__ = ["reconstruct", "load_result", "Result", "flight_parameters"]


def __getattr__(name: str):
    # the package's one reference above its layer: the API front door (tests/test_layers.py)
    if name in __all__:
        from recon.app import api

        return getattr(api, name)
    raise AttributeError(f"module 'recon' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
