"""Resonance identification of nonlinear stiffness and damping (Plakhtienko, [P]).

Harmonic extraction from a resonance-test record, Abel-type inversions of the
equivalent-linearization quantities (paper quadrature (4.2) and product integration), reduced
mass by the added-mass method, the model of the refinement by simulating the oscillator
against the record (fitted by :func:`identification.resonance.refine.refine_resonance`), and
cross-coupling from non-own resonances; the identification end to end
(:mod:`identification.resonance.pipeline`); the conditioning of the amplitude sequence (merging,
settling after jumps, monotone regularisation, scatter: :mod:`.conditioning`), the offset
correction of the restoring force (:mod:`.offset`) and bootstrap bands
(:func:`.own.bootstrap_bands`). Arrays in SI units; no files.
"""
from .abel import Characteristic, abel_integral
from .harmonics import AmplitudeSequence, amplitude_sequence, estimate_frequency
from .inversion import (damping_even, damping_odd, restoring_even, restoring_odd,
                        velocity_damping)

__all__ = ["Characteristic", "abel_integral", "restoring_odd", "restoring_even",
           "damping_even", "damping_odd", "velocity_damping"]
from .mass import reduced_mass  # noqa: E402
from .own import ResonanceCurves, identify_own_resonance  # noqa: E402

__all__ += ["AmplitudeSequence", "amplitude_sequence", "estimate_frequency", "reduced_mass",
            "ResonanceCurves", "identify_own_resonance"]
