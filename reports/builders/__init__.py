"""Report builders, one module per result kind; importing this package registers them all
with :func:`reports.build.register_builder`."""
__all__: list[str] = []
