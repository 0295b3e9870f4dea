"""The quantization suite's networks and figures (Dao's thesis, ch. 4) over :mod:`.quant_mlp`.

Training is the slow part and each method's network serves several tests (the fp32 one is every int8
method's reference), so each (method, target precision) trains once per device and is kept by a
:class:`TrainedNetworks` that a fixture owns — never by a module, so no state outlives the fixture.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..devices.base import Device
from . import quant_mlp as qm

#: training and quantization settings of the suite (each is part of the metrics' identity)
CFG = qm.Config()
DATA_ID = "sklearn load_digits, pixels/16, stratified 25 % test split (450 images), seed 0"


def identity(extra: dict[str, Any] | None = None, bits: int = 8) -> dict[str, Any]:
    """What shaped an accuracy figure: the data, the settings at the target precision, and ``extra``."""
    return {"data": DATA_ID, **dataclasses.replace(CFG, bits=bits).identity(), **(extra or {})}


def load_digits() -> qm.Digits:
    """The suite's data set, split with the settings' seed."""
    return qm.load_digits(CFG.seed)


class DeviceNetworks:
    """One device's network kernels and the networks trained on it so far."""

    def __init__(self, device: Device) -> None:
        self.device = device
        self.mlp = qm.QuantMLP(device)
        self._done: dict[tuple[str, int], qm.Trained] = {}

    def trained(self, data: qm.Digits, method: str, bits: int = 8) -> qm.Trained:
        """The network of ``method`` for a ``bits`` target, trained on first use; fp32 training (and the
        post-training calibration built on it) does not depend on the target, so it is shared."""
        key = (method, bits if qm.METHODS[method].qat else 32)
        if key not in self._done:
            if method == "ptq_max":
                self._done[key] = self.mlp.calibrate_max(data, self.trained(data, "fp32"))
            else:
                self._done[key] = self.mlp.train(data, qm.METHODS[method], dataclasses.replace(CFG, bits=bits))
        return self._done[key]


class TrainedNetworks:
    """:class:`DeviceNetworks` per device (by spec; a new device object under the same spec starts over)."""

    def __init__(self) -> None:
        self._by_spec: dict[str, DeviceNetworks] = {}

    def on(self, device: Device) -> DeviceNetworks:
        entry = self._by_spec.get(device.info.spec)
        if entry is None or entry.device is not device:
            entry = self._by_spec[device.info.spec] = DeviceNetworks(device)
        return entry


def fp32_record(nets: DeviceNetworks, data: qm.Digits) -> dict[str, Any]:
    """``precision.quant.fp32.accuracy`` (top-1 test accuracy, %) as ``gpuperf_record`` arguments."""
    tr = nets.trained(data, "fp32")
    acc = qm.accuracy(nets.mlp.forward_fp32(data.x_test, tr)[0], data.y_test)
    return {"name": "precision.quant.fp32.accuracy", "value": acc, "unit": "%", "better": "higher",
            "valid": (0.0, 100.0), "identity": identity(),
            "info": {"n_test": int(data.y_test.size), "steps": tr.steps, "train_host_s": round(tr.seconds, 3)}}


@dataclass
class MethodOutcome:
    """One quantization method's accuracy drop as ``gpuperf_record`` arguments, and where the device's
    integer network departs from the host's exact-integer emulation (empty: it does not)."""

    record: dict[str, Any]
    problems: list[str]


def method_outcome(nets: DeviceNetworks, data: qm.Digits, method: str, bits: int) -> MethodOutcome:
    """fp32 accuracy minus the ``bits``-bit network's (percentage points), with both accuracies, the clips,
    scales and histogram trajectories in ``info``. The device's codes may differ from the host's by one
    step where fp32 rounds across a boundary (counted in ``info``, a few allowed); the logits from the
    device's own codes must agree with the host's."""
    mlp = nets.mlp
    base = nets.trained(data, "fp32")
    tr = nets.trained(data, method, bits)
    acc32 = qm.accuracy(mlp.forward_fp32(data.x_test, base)[0], data.y_test)
    logits, codes = mlp.forward_int8(data.x_test, tr, bits, codes=True)
    acc8 = qm.accuracy(logits, data.y_test)
    scales = mlp.scales(tr, bits)
    host, host_codes = qm.host_int8(data.x_test, tr, scales, bits, codes=codes)
    flips = {k: int(np.count_nonzero(codes[k] != host_codes[k])) for k in codes}
    drop = acc32 - acc8
    info = {"fp32_accuracy": acc32, "int8_accuracy" if bits == 8 else f"int{bits}_accuracy": acc8, "bits": bits,
            "qat_fp32_eval_accuracy": qm.accuracy(mlp.forward_fp32(data.x_test, tr)[0], data.y_test),
            "clip_x": tr.clip_x, "clip_h": tr.clip_h, "scales": scales, "steps": tr.steps,
            "train_host_s": round(tr.seconds, 3), "code_flips_vs_host": flips,
            "trace": {k: [round(float(v), 4) for v in vals] for k, vals in tr.trace.items()},
            "inference": f"{bits}-bit weights and activations (eq. 4.4 scales) in int8 storage, int32 accumulation, "
                         "fp32 bias"}
    name = f"precision.quant.{method}.accuracy_drop" if bits == 8 else f"precision.quant.{method}.int{bits}.accuracy_drop"
    record = {"name": name, "value": drop, "unit": "pp", "better": "lower", "valid": (-100.0, 100.0), "info": info,
              "identity": identity({"method": method}, bits)}
    problems = []
    for k in codes:
        if np.max(np.abs(codes[k] - host_codes[k]), initial=0) > 1:
            problems.append(f"{method}: device int8 codes of {k} differ from the host's by more than one step")
        if flips[k] > max(1, 0.001 * codes[k].size):
            problems.append(f"{method}: {flips[k]} of {codes[k].size} {k} codes differ")
    err = float(np.max(np.abs(logits - host)))
    if not err <= 1e-4 * max(1.0, float(np.max(np.abs(host)))):
        problems.append(f"{method}: device int8 logits differ from the host's integer emulation by {err:.3g}")
    return MethodOutcome(record, problems)
