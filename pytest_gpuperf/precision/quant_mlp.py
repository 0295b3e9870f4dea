"""A 2-layer MLP trained on the device on scikit-learn's ``load_digits`` with each of Dao's (thesis,
chapter 4) activation-scale methods in the forward pass, then run with int8 weights and activations
and int32 accumulation (:mod:`.quant_kernels`).

Methods (activations; weights always use MAX, eq. 4.4, as in the thesis' experiments):

* ``fp32``       — no quantization: the reference accuracy.
* ``ptq_max``    — the fp32 model, quantized after training with MAX scales calibrated on the
  training set (no quantization-aware training).
* ``max``        — quantization-aware training, scale from each tensor's MAX (the thesis' MAX).
* ``percentile`` — clip at a histogram percentile of |x| (99.99 %, histograms every τ iterations).
* ``rand``       — eq. 4.6: MAX − random(0, p·MAX) every iteration, p from the histogram so that at
  most ``threshold`` of the elements lie in [MAX_new, MAX] (the thesis' Rand).
* ``rand_mix``   — Rand plus adaptive activation precision (§4.4.4): b starts at 32 and follows
  eq. 4.8 toward the 8-bit target from the histograms (the thesis' Rand+mix); inference at 8 bits.

Training is full fp32 backward (straight-through estimator), SGD, fixed seeds; histograms of the
activation tensors are taken over η iterations every τ (§4.4.5). Inference uses the activation clips
recorded by the last training iteration (§4.4.1). Everything runs through :class:`~pytest_gpuperf.
devices.base.Device` (compile/launch/to_device/to_host), so the same code trains on CUDA and OpenCL.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..devices import ndrange
from . import quant_kernels, quant_scale

LOCAL = 64
CLASSES = 10
FEATURES = 64


@dataclass(frozen=True)
class Digits:
    x_train: np.ndarray  # float32 [n, 64] in [0, 1]
    y_train: np.ndarray  # int32 [n]
    x_test: np.ndarray
    y_test: np.ndarray


def load_digits(seed: int = 0, test_size: float = 0.25) -> Digits:
    """scikit-learn's 8×8 digits (1,797 images), pixels scaled to [0, 1], a stratified seeded split."""
    from sklearn.datasets import load_digits as sk_load
    from sklearn.model_selection import train_test_split

    d = sk_load()
    x = (d.data / 16.0).astype(np.float32)
    y = d.target.astype(np.int32)
    xtr, xte, ytr, yte = train_test_split(x, y, test_size=test_size, random_state=seed, stratify=y)
    return Digits(np.ascontiguousarray(xtr), ytr, np.ascontiguousarray(xte), yte)


@dataclass(frozen=True)
class Method:
    name: str
    activations: str  # "none" | "max" | "percentile" | "rand"
    adaptive: bool = False
    qat: bool = True  # quantization-aware training (else: fp32 training)


METHODS: dict[str, Method] = {m.name: m for m in [
    Method("fp32", "none", qat=False),
    Method("ptq_max", "max", qat=False),
    Method("max", "max"),
    Method("percentile", "percentile"),
    Method("rand", "rand"),
    Method("rand_mix", "rand", adaptive=True),
]}


@dataclass(frozen=True)
class Config:
    """Training and quantization settings (each shapes the accuracies: part of the metrics' identity)."""

    hidden: int = 64
    epochs: int = 30
    batch: int = 64
    lr: float = 0.5
    seed: int = 0
    bits: int = 8  # the target (inference) precision
    tau: int = 21  # histogram every τ iterations (one epoch of 1,347 / 64) …
    eta: int = 3  # … averaged over η iterations (§4.4.5)
    percentile: float = 99.99
    threshold: float = 1e-3  # Rand: tail fraction allowed in [MAX_new, MAX] (thesis: 0.001–0.005 %)
    beta: float = 1000.0  # Rand+mix: step of eq. 4.8 (set so the hidden layer reaches 8 bits within the 30 epochs)
    bins: int = 2048

    def identity(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


@dataclass
class Trained:
    method: str
    w1: np.ndarray
    b1: np.ndarray
    w2: np.ndarray
    b2: np.ndarray
    clip_x: float  # activation clips for inference (the last training iteration's, or calibrated)
    clip_h: float
    steps: int
    seconds: float  # host wall time of the training loop
    trace: dict[str, list] = field(default_factory=dict)  # p / b per histogram update


class QuantMLP:
    """The kernels of one device, compiled once."""

    def __init__(self, device) -> None:
        self.device = device
        src = quant_kernels.source(device.info.backend)
        self.k = device.compile_many(src, (  # one build for every entry point
            "q_dense", "q_grad_w", "q_grad_in", "q_colsum", "q_xent_grad", "q_sgd", "q_fake_quant", "q_quantize",
            "q_gemm_i8", "q_gemm_f32"))

    # ---- launch helpers ------------------------------------------------------------------------------
    def _run(self, name: str, n: int, *args) -> Any:
        return self.device.launch(self.k[name], ndrange((n,), (LOCAL,)), (LOCAL,), list(args))

    def _fq(self, x, y, stat, off: int, n: int, frac: float, clip: float, bits: float) -> None:
        fl = quant_kernels.FQ_LOCAL
        self.device.launch(self.k["q_fake_quant"], (fl,), (fl,),
                           [x, y, stat, np.int32(off), np.int32(n), np.float32(frac), np.float32(clip),
                            np.float32(bits)])

    def _host(self, buf, n: int, dtype=np.float32) -> np.ndarray:
        return self.device.to_host(buf, dtype, n)

    # ---- training ------------------------------------------------------------------------------------
    def train(self, data: Digits, method: Method, cfg: Config = Config()) -> Trained:
        dev = self.device
        i32, f32 = np.int32, np.float32
        rng = np.random.default_rng(cfg.seed)
        H, B, F = cfg.hidden, cfg.batch, FEATURES
        # He initialisation, the same for every method (same seed)
        w1 = (rng.standard_normal((F, H)) * math.sqrt(2.0 / F)).astype(np.float32)
        w2 = (rng.standard_normal((H, CLASSES)) * math.sqrt(2.0 / H)).astype(np.float32)
        W1, W2 = dev.to_device(w1), dev.to_device(w2)
        B1, B2 = dev.to_device(np.zeros(H, np.float32)), dev.to_device(np.zeros(CLASSES, np.float32))
        buf = {n: dev.empty(4 * s) for n, s in {
            "xq": B * F, "w1q": F * H, "h": B * H, "hq": B * H, "w2q": H * CLASSES, "z": B * CLASSES,
            "g2": B * CLASSES, "dw2": H * CLASSES, "db2": CLASSES, "g1": B * H, "dw1": F * H, "db1": H,
            "sx": 1, "sh": 1, "sw1": 1, "sw2": 1}.items()}
        qat = method.qat
        wbits = cfg.bits if qat else 32
        abits = {"x": 32.0 if method.adaptive or not qat else float(cfg.bits),
                 "h": 32.0 if method.adaptive or not qat else float(cfg.bits)}
        clip = {"x": 0.0, "h": 0.0}  # 0: the kernel takes frac × MAX
        p = {"x": 0.0, "h": 0.0}
        window: dict[str, list] = {"x": [], "h": []}
        trace: dict[str, list] = {"bits_x": [], "bits_h": [], "p_x": [], "p_h": [], "clip_x": [], "clip_h": []}
        noise = np.random.default_rng(cfg.seed + 1)
        n_train = data.x_train.shape[0]
        per_epoch = n_train // B
        lr = f32(cfg.lr)
        step = 0
        t0 = time.perf_counter()
        for _epoch in range(cfg.epochs):
            perm = rng.permutation(n_train)
            xe, ye = data.x_train[perm], data.y_train[perm]
            X, Y = dev.to_device(np.ascontiguousarray(xe)), dev.to_device(np.ascontiguousarray(ye))
            for j in range(per_epoch):
                frac = {"x": 1.0, "h": 1.0}
                if qat and method.activations == "rand":
                    frac = {t: quant_scale.noise_fraction(p[t], noise) for t in frac}
                bx, bh = (math.ceil(abits[t]) for t in ("x", "h"))  # integer precision (thesis Table 4)
                self._fq(X, buf["xq"], buf["sx"], j * B * F, B * F, frac["x"], clip["x"], bx)
                self._fq(W1, buf["w1q"], buf["sw1"], 0, F * H, 1.0, 0.0, wbits)
                self._run("q_dense", B * H, buf["xq"], buf["w1q"], B1, buf["h"], i32(B), i32(H), i32(F), i32(1))
                self._fq(buf["h"], buf["hq"], buf["sh"], 0, B * H, frac["h"], clip["h"], bh)
                self._fq(W2, buf["w2q"], buf["sw2"], 0, H * CLASSES, 1.0, 0.0, wbits)
                self._run("q_dense", B * CLASSES, buf["hq"], buf["w2q"], B2, buf["z"], i32(B), i32(CLASSES), i32(H),
                          i32(0))
                self._run("q_xent_grad", B, buf["z"], Y, buf["g2"], i32(B), i32(CLASSES), i32(j * B))
                self._run("q_grad_w", H * CLASSES, buf["hq"], buf["g2"], buf["dw2"], i32(B), i32(CLASSES), i32(H))
                self._run("q_colsum", CLASSES, buf["g2"], buf["db2"], i32(B), i32(CLASSES))
                self._run("q_grad_in", B * H, buf["g2"], buf["w2q"], buf["h"], buf["g1"], i32(B), i32(CLASSES), i32(H))
                self._run("q_grad_w", F * H, buf["xq"], buf["g1"], buf["dw1"], i32(B), i32(H), i32(F))
                self._run("q_colsum", H, buf["g1"], buf["db1"], i32(B), i32(H))
                for w, g, n in ((W1, "dw1", F * H), (B1, "db1", H), (W2, "dw2", H * CLASSES), (B2, "db2", CLASSES)):
                    self._run("q_sgd", n, w, buf[g], lr, i32(n))
                # §4.4.5: histograms over η iterations every τ; then p (Rand), the clip (percentile), b (mix)
                if qat and method.activations in ("percentile", "rand") and step % cfg.tau >= cfg.tau - cfg.eta:
                    window["x"].append(xe[j * B:(j + 1) * B])
                    window["h"].append(self._host(buf["h"], B * H))
                    if step % cfg.tau == cfg.tau - 1:
                        for t in ("x", "h"):
                            hist = quant_scale.Histogram.of(window[t], cfg.bins)
                            if method.activations == "percentile":
                                clip[t] = quant_scale.clip_percentile(hist, cfg.percentile)
                                trace[f"clip_{t}"].append(clip[t])
                            else:
                                p[t] = quant_scale.noise_p(hist, cfg.threshold)
                                trace[f"p_{t}"].append(p[t])
                            if method.adaptive:
                                abits[t] = quant_scale.precision_step(hist, abits[t], cfg.bits, cfg.beta)
                                trace[f"bits_{t}"].append(abits[t])
                            window[t] = []
                step += 1
        dev.synchronize()
        seconds = time.perf_counter() - t0
        params = [self._host(b, n) for b, n in ((W1, F * H), (B1, H), (W2, H * CLASSES), (B2, CLASSES))]
        if qat:
            cx, ch = float(self._host(buf["sx"], 1)[0]), float(self._host(buf["sh"], 1)[0])
        else:
            cx = ch = float("nan")
        tr = Trained(method.name, params[0].reshape(F, H), params[1], params[2].reshape(H, CLASSES), params[3], cx, ch,
                     step, seconds, {k: v for k, v in trace.items() if v})
        return self.calibrate_max(data, tr) if method.name == "ptq_max" else tr

    def calibrate_max(self, data: Digits, tr: Trained) -> Trained:
        """Post-training quantization: the fp32 model with MAX activation clips over the training set."""
        h = self.forward_fp32(data.x_train, tr)[1]
        return Trained("ptq_max", tr.w1, tr.b1, tr.w2, tr.b2, float(np.abs(data.x_train).max()), float(np.abs(h).max()),
                       tr.steps, tr.seconds, dict(tr.trace))

    # ---- inference -----------------------------------------------------------------------------------
    def forward_fp32(self, x: np.ndarray, tr: Trained) -> tuple[np.ndarray, np.ndarray]:
        """(logits, hidden activations) of the fp32 network on the device."""
        dev, i32 = self.device, np.int32
        M, H = x.shape[0], tr.w1.shape[1]
        X, W1, B1, W2, B2 = (dev.to_device(np.ascontiguousarray(a, np.float32)) for a in (x, tr.w1, tr.b1, tr.w2, tr.b2))
        h, z = dev.empty(4 * M * H), dev.empty(4 * M * CLASSES)
        self._run("q_dense", M * H, X, W1, B1, h, i32(M), i32(H), i32(FEATURES), i32(1))
        self._run("q_dense", M * CLASSES, h, W2, B2, z, i32(M), i32(CLASSES), i32(H), i32(0))
        return self._host(z, M * CLASSES).reshape(M, CLASSES), self._host(h, M * H).reshape(M, H)

    def scales(self, tr: Trained, bits: int = 8) -> dict[str, float]:
        """Eq. 4.4 scales of inference: weights from their MAX, activations from the recorded clips."""
        return {"x": quant_scale.scale_for(tr.clip_x, bits), "h": quant_scale.scale_for(tr.clip_h, bits),
                "w1": quant_scale.scale_for(float(np.abs(tr.w1).max()), bits),
                "w2": quant_scale.scale_for(float(np.abs(tr.w2).max()), bits)}

    def forward_int8(self, x: np.ndarray, tr: Trained, bits: int = 8, codes: bool = False):
        """Logits of the int8 network: every layer input and weight an int8 code, int32 accumulation in
        ``q_gemm_i8``, dequantized (``acc / (s_in·s_w)``) plus the fp32 bias, ReLU, requantized. ``bits``
        below 8 keeps b-bit codes in the same int8 storage (no packed kernel).
        ``codes``: also return the device's int8 codes ``{"x", "w1", "h", "w2"}`` (as the host's
        :func:`host_int8` lays them out: ``x·w1``, ``h·w2``)."""
        if not 2 <= bits <= 8:
            raise ValueError(f"the device path stores codes in int8: bits must be 2..8, got {bits}")
        dev, i32, f32 = self.device, np.int32, np.float32
        s = self.scales(tr, bits)
        lo, hi = (f32(v) for v in quant_scale.qrange(bits))
        M, H = x.shape[0], tr.w1.shape[1]
        kp1, kp2 = pad4(FEATURES), pad4(H)
        # weights: transposed (one row per output), quantized on the device by the same kernel
        wq = {}
        for name, w, kp in (("w1", tr.w1, kp1), ("w2", tr.w2, kp2)):
            wt = np.ascontiguousarray(w.T, np.float32)
            q = dev.empty(wt.shape[0] * kp)
            self._run("q_quantize", wt.shape[0] * kp, dev.to_device(wt), q, i32(wt.shape[0]), i32(wt.shape[1]),
                      i32(kp), f32(s[name]), lo, hi)
            wq[name] = q
        X = dev.to_device(np.ascontiguousarray(x, np.float32))
        xq, h, hq, z = dev.empty(M * kp1), dev.empty(4 * M * H), dev.empty(M * kp2), dev.empty(4 * M * CLASSES)
        B1, B2 = dev.to_device(tr.b1.astype(np.float32)), dev.to_device(tr.b2.astype(np.float32))
        self._run("q_quantize", M * kp1, X, xq, i32(M), i32(FEATURES), i32(kp1), f32(s["x"]), lo, hi)
        self._run("q_gemm_i8", M * H, xq, wq["w1"], B1, h, i32(M), i32(H), i32(kp1), f32(1.0 / (s["x"] * s["w1"])), i32(1))
        self._run("q_quantize", M * kp2, h, hq, i32(M), i32(H), i32(kp2), f32(s["h"]), lo, hi)
        self._run("q_gemm_i8", M * CLASSES, hq, wq["w2"], B2, z, i32(M), i32(CLASSES), i32(kp2),
                  f32(1.0 / (s["h"] * s["w2"])), i32(0))
        logits = self._host(z, M * CLASSES).reshape(M, CLASSES)
        if not codes:
            return logits
        def back(buf, rows, kp, k):
            return self._host(buf, rows * kp, np.int8).reshape(rows, kp)[:, :k].astype(np.int64)
        return logits, {"x": back(xq, M, kp1, FEATURES), "w1": back(wq["w1"], H, kp1, FEATURES).T,
                        "h": back(hq, M, kp2, H), "w2": back(wq["w2"], CLASSES, kp2, H).T}


def pad4(k: int) -> int:
    return -(-int(k) // 4) * 4


def host_int8(x: np.ndarray, tr: Trained, s: dict[str, float], bits: int = 8,
              codes: dict[str, np.ndarray] | None = None) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The int8 network on the host (exact integer accumulation, float64 epilogue): (logits, its codes
    ``{"x", "w1", "h", "w2"}``). ``codes``: run the integer layers on these codes instead (the device's),
    so the device's accumulation and epilogue can be compared exactly; the codes themselves may differ
    by one step where the device's fp32 arithmetic lands on the other side of a rounding boundary."""
    q = quant_scale.quantize
    own = {"x": q(x, s["x"], bits), "w1": q(tr.w1, s["w1"], bits), "w2": q(tr.w2, s["w2"], bits)}
    use = own if codes is None else codes
    acc1 = use["x"] @ use["w1"]
    h = np.maximum(acc1 / (s["x"] * s["w1"]) + tr.b1, 0.0)
    own["h"] = q(h, s["h"], bits)
    use = own if codes is None else codes
    acc2 = use["h"] @ use["w2"]
    return acc2 / (s["h"] * s["w2"]) + tr.b2, own


def accuracy(logits: np.ndarray, y: np.ndarray) -> float:
    """Top-1 accuracy in percent."""
    return float(100.0 * np.mean(np.argmax(logits, axis=1) == y))
