"""The application: the ``dockrecon`` command (:mod:`recon.app.cli`), campaigns of many
flights and calibration studies on a Dask cluster (:mod:`recon.app.campaign`,
:mod:`recon.app.study`), the embedded cluster's worker set-up (:mod:`recon.app.dask_worker`),
and the jobs that write a result directory whole, report included (:mod:`recon.app.jobs`).

This is the only code that imports :mod:`reports` and click; the library below it
(:mod:`recon`, :mod:`identification`, :mod:`models`) computes and writes results, and never
draws a report.
"""
__all__: list[str] = []
