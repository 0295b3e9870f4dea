"""SRAD's first kernel on the host: the four directional derivatives and the diffusion coefficient of
each pixel (Rodinia srad), the NumPy reference both the application corpus and the held-out ports check
their kernels against."""

from __future__ import annotations

import numpy as np


def srad_coefficients(image: np.ndarray, q0sqr: float) -> dict[str, np.ndarray]:
    """``dN``, ``dS``, ``dW``, ``dE`` and ``C`` of a 2-D ``image`` (edge pixels replicated, as the kernels
    clamp their neighbours), in float64, each flattened row-major."""
    j = np.pad(image.astype(np.float64), 1, mode="edge")
    jc = j[1:-1, 1:-1]
    n, s, w, e = j[:-2, 1:-1] - jc, j[2:, 1:-1] - jc, j[1:-1, :-2] - jc, j[1:-1, 2:] - jc
    g2 = (n * n + s * s + w * w + e * e) / (jc * jc)
    lap = (n + s + w + e) / jc
    qsqr = (0.5 * g2 - lap * lap / 16) / (1 + 0.25 * lap) ** 2
    c = np.clip(1.0 / (1.0 + (qsqr - q0sqr) / (q0sqr * (1 + q0sqr))), 0, 1)
    return {k: v.reshape(-1) for k, v in (("dN", n), ("dS", s), ("dW", w), ("dE", e), ("C", c))}
