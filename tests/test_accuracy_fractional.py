"""The certificate's fractional maximum on the real OpenCL device (PoCL in CI), over a sub-range.

A planted function whose worst input is known: ``sqrt`` with the gate check's 1-ulp plant (the next float
up on every input whose low 4 mantissa bits are zero). In CUDA's convention (steps from the correctly
rounded result) every planted input reads 1 step, so that maximum's "worst input" is only a tie-break (the
largest bit pattern among them); the fractional error ``|y − √x| / ulp(√x)`` differs between them, and the
certificate must name the input where it is largest and its value — what the published exhaustive tables
list. The host computes both from the device's own results, independently of the sweep kernel.
"""

from __future__ import annotations

import numpy as np
import pytest

from pytest_gpuperf.accuracy import certificate, expr_kernels, fp_formats, mathfn_check

FIRST = 0x3F800000  # 1.0
DOMAIN = (1.0, 1.0 + 2.0 ** -8)  # 2^15 + 1 inputs


@pytest.fixture(scope="module")
def planted(cl_device):
    """(certificate in CUDA's convention, inputs, device results) of the planted sqrt over DOMAIN."""
    cert = certificate.certify(cl_device, "sqrt", "sqrt", "sqrt", "cr", domain=DOMAIN, plant=True)
    x = np.arange(FIRST, FIRST + cert.checked, dtype=np.uint32).view(np.float32)
    y = expr_kernels.evaluate(cl_device, fp_formats.FP32, "sqrt(x0)", [x], plant=True)
    return cert, x, y


def _ordered(v: np.ndarray) -> np.ndarray:
    b = v.view(np.int32).astype(np.int64)
    return np.where(b < 0, -(b & 0x7FFFFFFF), b)


def test_fractional_maximum_is_the_largest_error_and_its_input(planted):
    cert, x, y = planted
    assert cert.checked == (1 << 15) + 1 and cert.confirmed and cert.ulp_confirmed
    exact = np.sqrt(x.astype(np.float64))  # correctly rounded binary64: far below 1e-9 binary32 ulp
    ulp = np.ldexp(1.0, np.floor(np.log2(exact)).astype(int) - 23)
    frac = np.abs(y.astype(np.float64) - exact) / ulp
    # the sweep ranks by the error rounded to binary32 and breaks ties by the larger bit pattern
    key = frac.astype(np.float32)
    best = np.flatnonzero(key == key.max()).max()
    assert cert.max_ulp == pytest.approx(float(frac.max()), abs=1e-9)
    assert cert.worst_ulp["input_bits"] == f"0x{int(x[best:best + 1].view(np.uint32)[0]):08x}"
    assert float.fromhex(cert.worst_ulp["input_hex"][0]) == float(x[best])
    assert 1.0 < cert.max_ulp < 1.5  # a planted input: one step plus that input's rounding error
    assert int(x[best:best + 1].view(np.uint32)[0]) & 15 == 0


def test_integer_maximum_worst_input_is_a_tie_break_and_says_so(planted):
    cert, x, y = planted
    steps = np.abs(_ordered(y) - _ordered(np.sqrt(x.astype(np.float64)).astype(np.float32)))
    at_max = np.flatnonzero(steps == steps.max())
    assert cert.max == float(steps.max()) == 1.0 and at_max.size > 1000  # ~1 input in 16 ties at 1 step
    tie = int(x[at_max[-1]:at_max[-1] + 1].view(np.uint32)[0])
    assert cert.worst["input_bits"] == f"0x{tie:08x}"  # the largest bit pattern among them
    assert cert.worst["input_bits"] != cert.worst_ulp["input_bits"]
    info = cert.info()
    assert "tie-break" in info["worst_is"] and info["max_ulp_fractional"] == cert.max_ulp
    assert info["worst_ulp_fractional"]["input_bits"] == cert.worst_ulp["input_bits"]


def test_fractional_record_names_the_input_and_keeps_the_gated_names(planted):
    cert, _, _ = planted
    ident = {"inputs": "exhaustive", "range": "test"}
    r = mathfn_check.fractional_record("accuracy.fp32.sqrt", cert, ident, planted=True)
    assert r["name"] == "accuracy.fp32.sqrt.max_ulp_fractional" and r["value"] == cert.max_ulp
    assert r["info"]["worst_input_hex"] == cert.worst_ulp["input_hex"][0] and r["identity"] == ident
    assert "planted" in r["info"]


def test_unconfirmed_fractional_maximum_is_refused(planted):
    cert, _, _ = planted
    bad = certificate.Certificate(**{**cert.__dict__, "ulp_confirmed": False})
    with pytest.raises(AssertionError, match="not proven"):
        mathfn_check.fractional_record("accuracy.fp32.sqrt", bad, {"inputs": "exhaustive"})


def test_the_docs_table_names_the_largest_fractional_error_s_input_where_a_run_has_it():
    from tools.evidence import accuracy_tables

    key = "accuracy.fp32.exp.max_ulp"
    tie = {key: {"info": {"worst": {"input_hex": ["-0x1.5be55cp+6"]}}}}
    frac = {**tie, key + "_fractional": {"info": {"worst": {"input_hex": ["-0x1.bcc73p+3"]}}}}
    assert accuracy_tables.worst_input([("H100 CUDA", tie)], key) == "-0x1.5be55cp+6 (H100 CUDA)"
    assert (accuracy_tables.worst_input([("PoCL", {}), ("H100 CUDA", frac)], key)
            == "-0x1.bcc73p+3 (H100 CUDA, largest fractional error)")
