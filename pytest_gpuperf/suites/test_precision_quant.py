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

import dataclasses

import numpy as np
import pytest

from pytest_gpuperf.precision import quant_kernels, quant_mlp as qm
from pytest_gpuperf.timing.profiles import profile

CFG = qm.Config()
DATA_ID = "sklearn load_digits, pixels/16, stratified 25 % test split (450 images), seed 0"
ACC_TOL = {"abs": 0.5}
#: trained networks per device (id → (device, QuantMLP, {method: Trained})), so each method trains once
_CACHE: dict[int, tuple] = {}


def _runs(device):
    entry = _CACHE.get(id(device))
    if entry is None or entry[0] is not device:
        entry = _CACHE[id(device)] = (device, qm.QuantMLP(device), {})
    return entry[1], entry[2]


def _trained(device, data, method: str, bits: int = 8) -> qm.Trained:
    """Each (method, target precision) trains once per device; fp32 training does not depend on the target."""
    mlp, done = _runs(device)
    key = (method, bits if qm.METHODS[method].qat else 32)
    if key not in done:
        if method == "ptq_max":
            done[key] = mlp.calibrate_max(data, _trained(device, data, "fp32"))
        else:
            done[key] = mlp.train(data, qm.METHODS[method], dataclasses.replace(CFG, bits=bits))
    return done[key]


@pytest.fixture(scope="module")
def digits():
    return qm.load_digits(CFG.seed)


def _identity(extra=None, bits: int = 8):
    return {"data": DATA_ID, **dataclasses.replace(CFG, bits=bits).identity(), **(extra or {})}


def test_quant_fp32(gpu_device, gpuperf_record, digits):
    mlp, _ = _runs(gpu_device)
    tr = _trained(gpu_device, digits, "fp32")
    acc = qm.accuracy(mlp.forward_fp32(digits.x_test, tr)[0], digits.y_test)
    gpuperf_record("precision.quant.fp32.accuracy", acc, "%", better="higher", tolerance=ACC_TOL, valid=(0.0, 100.0),
                   info={"n_test": int(digits.y_test.size), "steps": tr.steps, "train_host_s": round(tr.seconds, 3)},
                   identity=_identity())
    assert acc > 90.0, f"the fp32 MLP reached only {acc:.2f} % on the digits test set: training is broken"


@pytest.mark.parametrize("bits", [8, 4], ids=["int8", "int4"])
@pytest.mark.parametrize("method", ["ptq_max", "max", "percentile", "rand", "rand_mix"])
def test_quant_method(gpu_device, gpuperf_record, digits, method, bits):
    mlp, _ = _runs(gpu_device)
    base = _trained(gpu_device, digits, "fp32")
    tr = _trained(gpu_device, digits, method, bits)
    acc32 = qm.accuracy(mlp.forward_fp32(digits.x_test, base)[0], digits.y_test)
    logits, codes = mlp.forward_int8(digits.x_test, tr, bits, codes=True)
    acc8 = qm.accuracy(logits, digits.y_test)
    scales = mlp.scales(tr, bits)
    host, host_codes = qm.host_int8(digits.x_test, tr, scales, bits, codes=codes)
    flips = {k: int(np.count_nonzero(codes[k] != host_codes[k])) for k in codes}
    drop = acc32 - acc8
    info = {"fp32_accuracy": acc32, "int8_accuracy" if bits == 8 else f"int{bits}_accuracy": acc8, "bits": bits, "qat_fp32_eval_accuracy":
            qm.accuracy(mlp.forward_fp32(digits.x_test, tr)[0], digits.y_test),
            "clip_x": tr.clip_x, "clip_h": tr.clip_h, "scales": scales, "steps": tr.steps,
            "train_host_s": round(tr.seconds, 3), "code_flips_vs_host": flips,
            "trace": {k: [round(float(v), 4) for v in vals] for k, vals in tr.trace.items()},
            "inference": f"{bits}-bit weights and activations (eq. 4.4 scales) in int8 storage, int32 accumulation, "
                         "fp32 bias"}
    name = f"precision.quant.{method}.accuracy_drop" if bits == 8 else f"precision.quant.{method}.int{bits}.accuracy_drop"
    gpuperf_record(name, drop, "pp", better="lower", tolerance=ACC_TOL, valid=(-100.0, 100.0), info=info,
                   identity=_identity({"method": method}, bits))
    # the device's int8 network is the host's exact-integer one: a code may differ by one where fp32 rounds
    # across a boundary (counted in info); the logits from the device's own codes must agree
    for k in codes:
        assert np.max(np.abs(codes[k] - host_codes[k]), initial=0) <= 1, (
            f"{method}: device int8 codes of {k} differ from the host's by more than one step")
        assert flips[k] <= max(1, 0.001 * codes[k].size), f"{method}: {flips[k]} of {codes[k].size} {k} codes differ"
    err = float(np.max(np.abs(logits - host)))
    assert err <= 1e-4 * max(1.0, float(np.max(np.abs(host)))), (
        f"{method}: device int8 logits differ from the host's integer emulation by {err:.3g}")


GEMM_N = 256


def test_quant_gemm_throughput(gpu_device, gpu_measure, gpuperf_record):
    mlp, _ = _runs(gpu_device)
    dev, i32, f32 = gpu_device, np.int32, np.float32
    n = GEMM_N
    rng = np.random.default_rng(17)
    a8 = rng.integers(-128, 128, (n, n), dtype=np.int64).astype(np.int8)
    b8 = rng.integers(-128, 128, (n, n), dtype=np.int64).astype(np.int8)  # B transposed: one row per output
    af, bf = a8.astype(np.float32), b8.astype(np.float32)
    bias = dev.to_device(np.zeros(n, np.float32))
    A8, B8, AF, BF = (dev.to_device(x) for x in (a8, b8, af, bf))
    o8, of = dev.empty(4 * n * n), dev.empty(4 * n * n)
    grid = qm.ndrange((n * n,), (qm.LOCAL,))
    args8 = [A8, B8, bias, o8, i32(n), i32(n), i32(n), f32(1.0), i32(0)]
    argsf = [AF, BF, bias, of, i32(n), i32(n), i32(n), f32(1.0), i32(0)]
    # correctness first: int32 accumulation is exact (|acc| ≤ 256·128² < 2^24, so its fp32 copy is too)
    exact = a8.astype(np.int64) @ b8.astype(np.int64).T
    dev.launch(mlp.k["q_gemm_i8"], grid, (qm.LOCAL,), args8)
    dev.launch(mlp.k["q_gemm_f32"], grid, (qm.LOCAL,), argsf)
    got8 = dev.to_host(o8, np.float32, n * n).reshape(n, n)
    gotf = dev.to_host(of, np.float32, n * n).reshape(n, n)
    assert np.array_equal(got8, exact.astype(np.float32)), "int8 GEMM result is not the exact integer product"
    assert np.array_equal(gotf, exact.astype(np.float32)), "fp32 GEMM of small integers is not exact"
    prof = profile("quant_gemm", gpu_device.info.is_cpu)
    m8 = gpu_measure(mlp.k["q_gemm_i8"], grid, (qm.LOCAL,), args8, **prof)
    mf = gpu_measure(mlp.k["q_gemm_f32"], grid, (qm.LOCAL,), argsf, **prof)
    where = ("a CPU figure (PoCL vectorizes the OpenCL kernel for the host's SIMD units), not a GPU one"
             if gpu_device.info.is_cpu else "device figure")
    ops = 2.0 * n ** 3
    ident = {"n": n, "layout": "A row-major, B transposed, one output per work-item, 4 codes per step"}
    gpuperf_record("precision.quant.gemm.int8.time_us", m8.stats.median * 1e6, "us", better="lower",
                   stats=m8.stats.scaled(1e6), info={"gops": ops / m8.stats.median / 1e9, "note": where},
                   identity=ident)
    gpuperf_record("precision.quant.gemm.fp32.time_us", mf.stats.median * 1e6, "us", better="lower",
                   stats=mf.stats.scaled(1e6), info={"gflops": ops / mf.stats.median / 1e9, "note": where},
                   identity=ident)
    gpuperf_record("precision.quant.gemm.int8_over_fp32", mf.stats.median / m8.stats.median, "x", better="higher",
                   valid=(1e-3, 1e3), info={"note": where, "int8_path": quant_kernels.INT8_PATH[gpu_device.info.dialect.name]},
                   identity=ident)
