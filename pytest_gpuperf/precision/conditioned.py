"""Test matrices of prescribed 2-norm condition number: A = U Σ Vᵀ with U, V Haar-random orthogonal (QR
of a Gaussian matrix, signs fixed by R's diagonal) and singular values geometrically spaced from 1 down
to 1/κ (LAPACK's latms mode 3), so κ₂(A) = κ up to the rounding of the product."""

from __future__ import annotations

import numpy as np


def orthogonal(n: int, rng: np.random.Generator) -> np.ndarray:
    q, r = np.linalg.qr(rng.standard_normal((n, n)))
    return q * np.sign(np.diag(r))


def with_condition(n: int, kappa: float, rng: np.random.Generator) -> np.ndarray:
    if not kappa >= 1.0:
        raise ValueError(f"condition number {kappa} must be ≥ 1")
    sigma = kappa ** (-np.arange(n) / max(n - 1, 1))
    return (orthogonal(n, rng) * sigma) @ orthogonal(n, rng).T


def backward_error(a: np.ndarray, x: np.ndarray, b: np.ndarray) -> float:
    """Normwise backward error ‖b − Ax‖∞ / (‖A‖∞‖x‖∞ + ‖b‖∞) (Rigal–Gaches), the residual accumulated in
    extended precision (np.longdouble) so that it measures x, not the check's own rounding."""
    al, xl, bl = (np.asarray(v, dtype=np.longdouble) for v in (a, x, b))
    if not np.all(np.isfinite(x)):
        return float("inf")
    r = bl - al @ xl
    den = np.max(np.sum(np.abs(al), axis=1)) * np.max(np.abs(xl)) + np.max(np.abs(bl))
    return float(np.max(np.abs(r)) / den)
