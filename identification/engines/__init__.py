"""Engines: each takes a problem and a :class:`identification.result.Result` and returns the
result with its own part added, ``engine(problem, ..., result=None) -> Result``.

* :func:`least_squares` -- multi-start bounded least squares, searched again while the best
  fit is implausible, and :func:`refine`, a final polish with a finer step
  (:mod:`identification.engines.least_squares`);
* :func:`laplace` -- the Gaussian at the optimum (:mod:`identification.engines.laplace`);
* :func:`importance` -- adaptive multi-mode importance sampling
  (:mod:`identification.engines.importance`);
* :func:`mcmc` -- emcee ensembles with HDF5 checkpoints and ArviZ diagnostics
  (:mod:`identification.engines.mcmc`).

A problem is anything with ``names``, ``space`` (:class:`identification.space.ParameterSpace`),
``n_residuals``, ``residuals(theta)``, ``least_squares_residuals(theta)`` and
``log_probability(theta)`` (:class:`recon.problem.ReconstructionProblem`,
:class:`identification.problem.ResidualProblem`).
"""
from identification.engines.importance import find_modes, importance, importance_samples
from identification.engines.laplace import laplace, laplace_samples
from identification.engines.least_squares import (GOF_SIGMAS, gof_limit, jacobian, least_squares,
                                                  multistart, refine)
from identification.engines.mcmc import (MIN_START_ESS, SamplerSettings, check_resumable, mcmc,
                                         run_ensembles)

__all__ = ["least_squares", "multistart", "refine", "jacobian", "gof_limit", "GOF_SIGMAS",
           "laplace", "laplace_samples", "importance", "importance_samples", "find_modes", "mcmc",
           "run_ensembles", "check_resumable", "SamplerSettings", "MIN_START_ESS"]
