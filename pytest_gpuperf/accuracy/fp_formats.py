"""IEEE 754 binary formats as the accuracy code needs them: precision ``p`` (significand bits including
the hidden one), exponent range ``[emin, emax]`` of normal numbers, and numpy dtypes for values and
raw bit patterns. Everything else (ulp, rounding, MPFR contexts) derives from these numbers."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Format:
    name: str  # "fp16" | "fp32" | "fp64"
    p: int
    emin: int
    emax: int
    dtype: np.dtype
    bits: np.dtype  # unsigned integer of the same width

    @property
    def width(self) -> int:
        return self.dtype.itemsize * 8

    @property
    def max(self) -> np.longdouble:
        """Largest finite value, (2 - 2^(1-p)) · 2^emax."""
        return np.ldexp(np.longdouble(2) - np.ldexp(np.longdouble(1), 1 - self.p), self.emax)

    @property
    def min_normal(self) -> np.longdouble:
        return np.ldexp(np.longdouble(1), self.emin)

    @property
    def min_subnormal(self) -> np.longdouble:
        return np.ldexp(np.longdouble(1), self.emin - self.p + 1)

    def from_bits(self, bits: np.ndarray) -> np.ndarray:
        return np.asarray(bits, dtype=self.bits).view(self.dtype)

    def to_bits(self, x: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(np.asarray(x, dtype=self.dtype)).view(self.bits)


FP16 = Format("fp16", 11, -14, 15, np.dtype(np.float16), np.dtype(np.uint16))
FP32 = Format("fp32", 24, -126, 127, np.dtype(np.float32), np.dtype(np.uint32))
FP64 = Format("fp64", 53, -1022, 1023, np.dtype(np.float64), np.dtype(np.uint64))
FORMATS = {f.name: f for f in (FP16, FP32, FP64)}

if np.finfo(np.longdouble).nmant < 63:  # pragma: no cover - aarch64/ppc hosts
    raise ImportError("pytest_gpuperf.accuracy needs x86 80-bit long double (numpy longdouble with a 64-bit "
                      f"significand) for its exact bulk references; this host has {np.finfo(np.longdouble).nmant}+1 bits")


def get(name: str) -> Format:
    try:
        return FORMATS[name]
    except KeyError:
        raise ValueError(f"unknown floating-point format {name!r}; use one of {sorted(FORMATS)}") from None
