"""Test matrices of prescribed 2-norm condition number: A = U Σ Vᵀ with singular values geometrically spaced
from 1 down to 1/κ (LAPACK's latms mode 3), so κ₂(A) = κ up to rounding, and U, V random orthogonal.

U and V are products of layers of random row permutations and Givens rotations on disjoint pairs of rows,
applied to Σ by elementwise operations only (each correctly rounded), and right-hand sides are formed with
exactly rounded sums: the matrix and b depend on the generator's draws alone, never on which kernels the
host's BLAS picks for its CPU (a QR and a matrix product through OpenBLAS round differently on AVX-512 and
AVX2 hosts, and a solve's final backward error, a rounding residue, follows its input's last bits)."""

from __future__ import annotations

import math

import numpy as np

#: how the matrices are made: part of the identity of every figure measured on them
METHOD = "givens-layers"


def layers(n: int) -> int:
    """Rotation layers per side: each layer pairs every row with a random other, so after about log₂ n
    layers every entry depends on every row (no entry of A is zero); two more to spare."""
    return math.ceil(math.log2(max(n, 2))) + 2


def _rotate_rows(a: np.ndarray, rng: np.random.Generator, count: int) -> None:
    """Apply ``count`` layers to the rows of the C-contiguous ``a`` in place: each layer permutes the rows at
    random (a permutation is orthogonal too), then rotates row k of the first half with row k of the second by
    a random Givens rotation."""
    n = a.shape[0]
    half = n // 2
    rotated, scratch = np.empty((half, a.shape[1])), np.empty((half, a.shape[1]))
    for _ in range(count):
        a[:] = a[rng.permutation(n)]
        x, y = rng.uniform(-1.0, 1.0, (2, half))
        r = np.sqrt(x * x + y * y)
        r[r == 0.0] = 1.0  # a zero draw leaves its pair unrotated
        c, s = (x / r)[:, None], (y / r)[:, None]
        top, bottom = a[:half], a[half:2 * half]
        np.subtract(np.multiply(c, top, out=rotated), np.multiply(s, bottom, out=scratch), out=rotated)
        np.add(np.multiply(s, top, out=scratch), np.multiply(c, bottom, out=bottom), out=bottom)
        top[:] = rotated


def orthogonal(n: int, rng: np.random.Generator) -> np.ndarray:
    """A random orthogonal n×n matrix (not Haar-distributed), the same bits on every host."""
    q = np.diag(rng.choice([-1.0, 1.0], n))
    _rotate_rows(q, rng, layers(n))
    return q


def with_condition(n: int, kappa: float, rng: np.random.Generator) -> np.ndarray:
    if not kappa >= 1.0:
        raise ValueError(f"condition number {kappa} must be ≥ 1")
    sigma = kappa ** (-np.arange(n) / max(n - 1, 1))
    a = np.diag(sigma * rng.choice([-1.0, 1.0], n))
    _rotate_rows(a, rng, layers(n))  # U Σ
    at = np.ascontiguousarray(a.T)
    _rotate_rows(at, rng, layers(n))  # (U Σ) Vᵀ: the columns rotated as the rows of the transpose
    return np.ascontiguousarray(at.T)


def product(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """A x with each row's sum exactly rounded (``math.fsum`` of the rounded products), so a right-hand side
    is the same on every host."""
    terms = np.asarray(a, np.float64) * np.asarray(x, np.float64)
    return np.array([math.fsum(row) for row in terms.tolist()])


def backward_error(a: np.ndarray, x: np.ndarray, b: np.ndarray) -> float:
    """Normwise backward error ‖b − Ax‖∞ / (‖A‖∞‖x‖∞ + ‖b‖∞) (Rigal–Gaches), the residual accumulated in
    extended precision (np.longdouble) so that it measures x, not the check's own rounding."""
    al, xl, bl = (np.asarray(v, dtype=np.longdouble) for v in (a, x, b))
    if not np.all(np.isfinite(x)):
        return float("inf")
    r = bl - al @ xl
    den = np.max(np.sum(np.abs(al), axis=1)) * np.max(np.abs(xl)) + np.max(np.abs(bl))
    return float(np.max(np.abs(r)) / den)
