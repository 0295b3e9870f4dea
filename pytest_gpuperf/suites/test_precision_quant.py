"""INT8 quantization (Dao's thesis, chapter 4) of a 2-layer MLP trained on the device on scikit-learn's
``load_digits`` (:mod:`pytest_gpuperf.precision.quant_mlp`).

* ``precision.quant.fp32.accuracy`` — top-1 test accuracy of the fp32 network (%).
* ``precision.quant.<method>.accuracy_drop`` — fp32 accuracy minus the int8 network's (percentage
  points; lower is better, negative where quantization-aware training helped), for ``ptq_max``,
  ``max``, ``percentile``, ``rand``, ``rand_mix``. ``info`` holds both accuracies, the clips inference
  used, and the p / b trajectories of the histogram updates. The int8 forward pass must match the
  host's exact-integer emulation (the test fails otherwise).
* ``precision.quant.<method>.int4.accuracy_drop`` — the same with a 4-bit target (the thesis' Fig. 4.5
  precision; 4-bit codes kept in the int8 storage and kernel): on this easy task int8 loses almost
  nothing, 4 bits tell the methods apart.
* ``precision.quant.gemm.int8_over_fp32`` — fp32 GEMM time over int8 GEMM time, the same loop
  (256³, int32 accumulation; ``__dp4a`` on CUDA). On PoCL a CPU figure, not a GPU one.

One test set of 450 images: one image is 0.22 points. Training is seeded and deterministic on a given
device, so the accuracies are gated to ±0.5 points (two images).
"""

from __future__ import annotations

import pytest

from pytest_gpuperf.precision import quant_gemm, quant_runs


@pytest.fixture(scope="module")
def digits():
    return quant_runs.load_digits()


@pytest.fixture(scope="module")
def networks():
    """The networks trained so far, per device: each (method, target precision) trains once per module."""
    return quant_runs.TrainedNetworks()


def test_quant_fp32(gpu_device, gpuperf_record, digits, networks):
    r = quant_runs.fp32_record(networks.on(gpu_device), digits)
    gpuperf_record(**r)
    assert r["value"] > 90.0, f"the fp32 MLP reached only {r['value']:.2f} % on the digits test set: training is broken"


@pytest.mark.parametrize("bits", [8, 4], ids=["int8", "int4"])
@pytest.mark.parametrize("method", ["ptq_max", "max", "percentile", "rand", "rand_mix"])
def test_quant_method(gpu_device, gpuperf_record, digits, networks, method, bits):
    out = quant_runs.method_outcome(networks.on(gpu_device), digits, method, bits)
    gpuperf_record(**out.record)
    # the device's int8 network is the host's exact-integer one (a code may differ by one, counted in info)
    assert not out.problems, out.problems


def test_quant_gemm_throughput(gpu_device, gpu_measure, gpuperf_record, networks):
    gemm = quant_gemm.prepare(gpu_device, networks.on(gpu_device).mlp)
    # correctness first: int32 accumulation is exact, and so is the fp32 GEMM of small integers
    assert gemm.int8_exact, "int8 GEMM result is not the exact integer product"
    assert gemm.fp32_exact, "fp32 GEMM of small integers is not exact"
    for r in gemm.records(gpu_measure):
        gpuperf_record(**r)
