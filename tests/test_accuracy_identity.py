"""Deterministic accuracy statistics on the real OpenCL device (PoCL in CI).

* A baseline made one way and a run made another way (another ``--gpuperf-accuracy-scale``) read
  ``incomparable``, never ``regressed``; the math suite's seeded sets do not move with the scale, so
  those metrics read ``pass`` with the very same value and identity (same n, same seed).
* The gate check's ``ulp`` plant in the device kernel is caught (``regressed``) against a baseline
  made without it, and it shows in ``info``, never in ``identity``.
* A certificate (the device sweep over every input of a range) finds the same maximum as a host check
  of every input, MPFR (gmpy2, here independently of the project's helpers) confirms the worst input,
  and the plant in the sweep kernel raises both the maximum and the mean.

The suite runs go through a subprocess of pytest on the repository's own suite files, two runs of
about five seconds each.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import gmpy2
import numpy as np
import pytest

from pytest_gpuperf.accuracy import certificate, check, expr_kernels, fp_formats, functions
from pytest_gpuperf.devices import discover
from suite_support import baseline_folder

ROOT = Path(__file__).resolve().parents[1]
HAVE_CL = any(d.backend == "opencl" for d in discover().devices)
pytestmark = pytest.mark.skipif(not HAVE_CL, reason="no OpenCL device (install pocl-opencl-icd)")
DEV = "opencl:0"
PLANTED, STEADY, OP = "sin", "cbrt", "add"
NODES = [f"pytest_gpuperf/suites/test_accuracy_math.py::test_math_function[{DEV}-{PLANTED}-fp32]",
         f"pytest_gpuperf/suites/test_accuracy_math.py::test_math_function[{DEV}-{STEADY}-fp32]",
         f"pytest_gpuperf/suites/test_accuracy_ops.py::test_basic_op[{DEV}-fp32-{OP}]"]


def _suite_run(tmp_path: Path, tag: str, *options: str) -> tuple[int, str, dict[str, dict]]:
    """Run the three suite tests on the OpenCL device; (exit code, output, metrics by name)."""
    out = tmp_path / f"{tag}.json"
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", f"--gpuperf-device={DEV}",
                           f"--gpuperf-baseline-dir={baseline_folder(tmp_path, 'bl')}", f"--gpuperf-json={out}", *options, *NODES],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    log = proc.stdout + proc.stderr
    assert out.exists(), log
    return proc.returncode, log, {m["name"]: m for m in json.loads(out.read_text())["metrics"]}


def test_scale_reads_incomparable_the_plant_regressed_seeded_sets_stay(tmp_path):
    rc, log, base = _suite_run(tmp_path, "baseline", "--gpuperf-update-baselines", "--gpuperf-accuracy-scale=1")
    assert rc == 0, log
    rc, log, run = _suite_run(tmp_path, "run", "--gpuperf-accuracy-scale=2", f"--gpuperf-plant=ulp={PLANTED}")

    # another scale of the operations suite: incomparable, naming the option, never regressed
    op = run[f"accuracy.fp32.{OP}.rn.max_ulp"]
    assert op["verdict"] == "incomparable", op
    assert op["identity"]["scale"] == 2.0 and base[op["name"]]["identity"]["scale"] == 1.0
    assert "scale" in op["info"]["line"]

    # the math suite's seeded set does not depend on the scale: same inputs, same value, pass
    for stat in ("max_ulp", "mean_ulp"):
        m, b = run[f"accuracy.fp32.{STEADY}.{stat}"], base[f"accuracy.fp32.{STEADY}.{stat}"]
        assert m["identity"] == b["identity"] and m["identity"]["inputs"] == "seeded", (m, b)
        assert m["value"] == b["value"] and m["verdict"] == "pass", m

    # the plant: same identity (a plant is not another way to measure), recorded in info, caught
    planted = {s: run[f"accuracy.fp32.{PLANTED}.{s}"] for s in ("max_ulp", "mean_ulp")}
    for s, m in planted.items():
        assert m["identity"] == base[m["name"]]["identity"], m
        assert "planted" in m["info"], m
        assert "planted" not in base[m["name"]]["info"]
    assert "regressed" in {m["verdict"] for m in planted.values()}, planted
    assert planted["mean_ulp"]["value"] > base[planted["mean_ulp"]["name"]]["value"]
    assert rc == 1 and "REGRESSED" in log, log  # the regression, and only it, fails the run
    assert all(m["verdict"] in ("pass", "incomparable") for n, m in run.items() if PLANTED not in n.split(".")[2])


@pytest.fixture(scope="module")
def sin_certificates(cl_device):
    """sin over every binary32 input of [1, 1 + 2^-8] (2^15 + 1 inputs), without and with the plant."""
    dom = (1.0, 1.0 + 2.0 ** -8)
    return (dom, certificate.certify(cl_device, "sin", "sin", "sin", "ulp", domain=dom),
            certificate.certify(cl_device, "sin", "sin", "sin", "ulp", domain=dom, plant=True))


def test_certificate_is_the_true_maximum_confirmed_in_mpfr(cl_device, sin_certificates):
    dom, cert, _ = sin_certificates
    assert cert.confirmed and cert.checked == cert.scored == (1 << 15) + 1
    # the host check of every input finds the same maximum and (to the device fp64's error) the same mean
    x = np.arange(0x3F800000, 0x3F800000 + cert.checked, dtype=np.uint32).view(np.float32)
    assert float(x[-1]) == dom[1]
    y = expr_kernels.evaluate(cl_device, fp_formats.FP32, "sin(x0)", [x])
    sc = check.score(y, [x], functions.reference_fn("sin", "fp32")(x), fp_formats.FP32, "sin", "ulp")
    assert sc.max == pytest.approx(cert.max, abs=1e-9)
    assert sc.mean == pytest.approx(cert.mean, abs=1e-6)
    # MPFR on its own: |y − sin x| / ulp(sin x) at the worst input, 200 bits
    w = cert.worst
    xw = float.fromhex(w["input_hex"][0])
    assert int(np.array([xw], np.float32).view(np.uint32)[0]) == int(w["input_bits"], 16)
    with gmpy2.context(precision=200):
        exact = gmpy2.sin(gmpy2.mpfr(xw))
        e = gmpy2.floor(gmpy2.log2(abs(exact)))
        err = abs(gmpy2.mpfr(w["device"]) - exact) / gmpy2.exp2(int(e) - 23)
    assert float(err) == pytest.approx(cert.max, abs=1e-9) and w["error"] == cert.max
    assert float(gmpy2.mpfr(w["mpfr"])) == pytest.approx(float(exact), rel=1e-15)


def test_plant_in_the_sweep_kernel_raises_max_and_mean(sin_certificates):
    _, cert, planted = sin_certificates
    assert planted.confirmed
    assert planted.max > cert.max + 0.5
    assert planted.mean > cert.mean + 0.01  # 1 input in 16 moved by one ulp
    bits = int(planted.worst["input_bits"], 16)
    assert bits & 15 == 0  # the worst input is a planted one


def test_excluded_interval_leaves_out_exactly_its_floats():
    lo, hi = functions.EXCLUDE["lgamma"]["fp32"]
    ranges = certificate.bit_ranges(None, (lo, hi))
    covered = sum(n for _, n in ranges)
    (_, a_count), (b_start, _) = ranges
    gap = np.arange(a_count, b_start, dtype=np.uint32).view(np.float32).astype(np.float64)
    assert covered + gap.size == 1 << 32
    assert np.all((gap > lo) & (gap < hi))  # everything left out is inside the open interval
    edges = np.array([a_count - 1, b_start], np.uint32).view(np.float32).astype(np.float64)
    assert not np.any((edges > lo) & (edges < hi))  # and its neighbours are not
