"""Inference: the engine every fit in the project runs on, and the ground-test identifications
fitted with it end to end.

* the engine: parameter spaces with priors (:mod:`identification.space`), problems
  (:mod:`identification.problem`), the engines (:mod:`identification.engines`: least squares,
  Laplace, importance sampling, emcee) and the one result type
  (:class:`identification.result.Result`);
* the ground-test identifications: static hysteresis loops
  (:mod:`identification.hysteresis_fit`), the hydraulic test rig (:mod:`identification.rig`),
  resonance tests (:mod:`identification.resonance`), with what they share in
  :mod:`identification.ground_test`.

Takes arrays in SI units and returns results; the application writes them. Only the MCMC
engine touches a file, its checkpoint, at the path it is given.
"""
__all__: list[str] = []
