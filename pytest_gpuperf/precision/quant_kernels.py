"""Device kernels of the quantization study, written once for both backends (the macro prelude of
:func:`pytest_gpuperf.devices.dialect.portable` plus the int8 types and the 4-way int8 dot product below).

Training (fp32, one work-item per output element, 1-D NDRange):

* ``q_dense``      — ``out[m,n] = act(Σ_k A[m,k]·W[k,n] + b[n])`` (act: ReLU or none)
* ``q_grad_w``     — ``dW[k,n] = Σ_m A[m,k]·G[m,n]``
* ``q_grad_in``    — ``dA[m,k] = (Σ_n G[m,n]·W[k,n]) · [H[m,k] > 0]`` (ReLU backward)
* ``q_colsum``     — ``db[n] = Σ_m G[m,n]``
* ``q_xent_grad``  — softmax cross-entropy gradient ``(softmax(z) − onehot(y)) / M`` per row
* ``q_sgd``        — ``w −= lr·g``
* ``q_fake_quant`` — one work-group: finds MAX(|x|), clips at ``clip`` (or ``frac``·MAX), quantizes to
  b bits and dequantizes (eq. 4.1/4.2/4.4, round half up), and stores the clip it used (the scale
  inference takes from the last training iteration, §4.4.1); b ≥ 24 passes the tensor through.

Inference (int8 weights and activations, int32 accumulation):

* ``q_quantize``   — fp32 → b-bit codes in int8 storage (clamped to [lo, hi]), rows padded to a
  multiple of 4 with zeros
* ``q_gemm_i8``    — ``out[m,n] = act(acc·inv_scale + b[n])``, ``acc = Σ_k Aq[m,k]·Bq[n,k]`` in int32;
  4 codes per step: ``__dp4a`` on CUDA, a plain int8 multiply-add on OpenCL
* ``q_gemm_f32``   — the same loop in fp32 (the throughput comparison's reference)
"""

from __future__ import annotations

from ..devices.dialect import per_language, portable

#: the int8 element type and the 4-way dot product (a, b point at 4 consecutive int8 codes, 4-aligned)
_I8 = per_language(
    cuda="#define I8 signed char\n"
         "#define DOT4(acc, a, b) acc = __dp4a(*(const int*)(a), *(const int*)(b), acc)\n",
    opencl="#define I8 char\n"
           "#define DOT4(acc, a, b) acc += (int)(a)[0] * (int)(b)[0] + (int)(a)[1] * (int)(b)[1] + "
           "(int)(a)[2] * (int)(b)[2] + (int)(a)[3] * (int)(b)[3]\n",
)

#: how each language computes the 4-way int8 dot product, for the record of the throughput ratio
INT8_PATH = per_language(cuda="__dp4a", opencl="int8 multiply-add (OpenCL C)")

#: work-group size of the single-group fake-quantizer (a power of two)
FQ_LOCAL = 256

BODY = r"""
KERNEL void q_dense(GLOBAL const float* RESTRICT a, GLOBAL const float* RESTRICT w, GLOBAL const float* RESTRICT b,
                    GLOBAL float* RESTRICT out, int M, int N, int K, int relu) {
  int i = GID;
  if (i >= M * N) return;
  int m = i / N, n = i - m * N;
  float acc = b[n];
  for (int k = 0; k < K; ++k) acc += a[m * K + k] * w[k * N + n];
  out[i] = (relu && acc < 0.0f) ? 0.0f : acc;
}

KERNEL void q_grad_w(GLOBAL const float* RESTRICT a, GLOBAL const float* RESTRICT g, GLOBAL float* RESTRICT dw,
                     int M, int N, int K) {
  int i = GID;
  if (i >= K * N) return;
  int k = i / N, n = i - k * N;
  float acc = 0.0f;
  for (int m = 0; m < M; ++m) acc += a[m * K + k] * g[m * N + n];
  dw[i] = acc;
}

KERNEL void q_grad_in(GLOBAL const float* RESTRICT g, GLOBAL const float* RESTRICT w, GLOBAL const float* RESTRICT h,
                      GLOBAL float* RESTRICT da, int M, int N, int K) {
  int i = GID;
  if (i >= M * K) return;
  int m = i / K, k = i - m * K;
  float acc = 0.0f;
  for (int n = 0; n < N; ++n) acc += g[m * N + n] * w[k * N + n];
  da[i] = h[i] > 0.0f ? acc : 0.0f;
}

KERNEL void q_colsum(GLOBAL const float* RESTRICT g, GLOBAL float* RESTRICT db, int M, int N) {
  int n = GID;
  if (n >= N) return;
  float acc = 0.0f;
  for (int m = 0; m < M; ++m) acc += g[m * N + n];
  db[n] = acc;
}

KERNEL void q_xent_grad(GLOBAL const float* RESTRICT z, GLOBAL const int* RESTRICT y, GLOBAL float* RESTRICT g,
                        int M, int N, int y_off) {
  int m = GID;
  if (m >= M) return;
  float top = z[m * N];
  for (int n = 1; n < N; ++n) top = fmaxf(top, z[m * N + n]);
  float sum = 0.0f;
  for (int n = 0; n < N; ++n) sum += expf(z[m * N + n] - top);
  int label = y[y_off + m];
  for (int n = 0; n < N; ++n)
    g[m * N + n] = (expf(z[m * N + n] - top) / sum - (n == label ? 1.0f : 0.0f)) / (float)M;
}

KERNEL void q_sgd(GLOBAL float* RESTRICT w, GLOBAL const float* RESTRICT g, float lr, int n) {
  int i = GID;
  if (i < n) w[i] -= lr * g[i];
}

/* one work-group of FQ_LOCAL items; x[off .. off+n) -> y[0 .. n); stat[0] = the clip used */
KERNEL void q_fake_quant(GLOBAL const float* RESTRICT x, GLOBAL float* RESTRICT y, GLOBAL float* RESTRICT stat,
                         int off, int n, float frac, float clip, float bits) {
  LOCAL_MEM float red[FQ_LOCAL];
  int l = LID;
  float m = 0.0f;
  for (int i = l; i < n; i += FQ_LOCAL) m = fmaxf(m, fabsf(x[off + i]));
  red[l] = m;
  BARRIER;
  for (int s = FQ_LOCAL / 2; s > 0; s >>= 1) {
    if (l < s) red[l] = fmaxf(red[l], red[l + s]);
    BARRIER;
  }
  float c = clip > 0.0f ? clip : frac * red[0];
  if (l == 0) stat[0] = c;
  if (bits >= 24.0f || !(c > 0.0f)) {
    for (int i = l; i < n; i += FQ_LOCAL) y[i] = x[off + i];
    return;
  }
  float levels = exp2(bits) - 1.0f;
  float s = levels / (2.0f * c);
  float hi = (levels - 1.0f) * 0.5f, lo = -(levels + 1.0f) * 0.5f;
  for (int i = l; i < n; i += FQ_LOCAL) {
    float q = floor(x[off + i] * s + 0.5f);
    y[i] = fminf(fmaxf(q, lo), hi) / s;
  }
}

KERNEL void q_quantize(GLOBAL const float* RESTRICT x, GLOBAL I8* RESTRICT q, int M, int K, int Kp, float s,
                       float lo, float hi) {
  int i = GID;
  if (i >= M * Kp) return;
  int m = i / Kp, k = i - m * Kp;
  float v = k < K ? floor(x[m * K + k] * s + 0.5f) : 0.0f;
  q[i] = (I8)(int)fminf(fmaxf(v, lo), hi);
}

KERNEL void q_gemm_i8(GLOBAL const I8* RESTRICT a, GLOBAL const I8* RESTRICT bt, GLOBAL const float* RESTRICT bias,
                      GLOBAL float* RESTRICT out, int M, int N, int Kp, float inv_scale, int relu) {
  int i = GID;
  if (i >= M * N) return;
  int m = i / N, n = i - m * N;
  GLOBAL const I8* pa = a + m * Kp;
  GLOBAL const I8* pb = bt + n * Kp;
  int acc = 0;
  for (int k = 0; k < Kp; k += 4) DOT4(acc, pa + k, pb + k);
  float v = (float)acc * inv_scale + bias[n];
  out[i] = (relu && v < 0.0f) ? 0.0f : v;
}

KERNEL void q_gemm_f32(GLOBAL const float* RESTRICT a, GLOBAL const float* RESTRICT bt, GLOBAL const float* RESTRICT bias,
                       GLOBAL float* RESTRICT out, int M, int N, int Kp, float inv_scale, int relu) {
  int i = GID;
  if (i >= M * N) return;
  int m = i / N, n = i - m * N;
  GLOBAL const float* pa = a + m * Kp;
  GLOBAL const float* pb = bt + n * Kp;
  float acc = 0.0f;
  for (int k = 0; k < Kp; k += 4)
    acc += pa[k] * pb[k] + pa[k + 1] * pb[k + 1] + pa[k + 2] * pb[k + 2] + pa[k + 3] * pb[k + 3];
  float v = acc * inv_scale + bias[n];
  out[i] = (relu && v < 0.0f) ? 0.0f : v;
}
"""


def source(backend: str) -> str:
    """The whole kernel text for ``backend`` (a ``Dialect.name``)."""
    if backend not in _I8:
        raise ValueError(f"unknown backend {backend!r}: expected {' or '.join(map(repr, _I8))}")
    return portable(_I8[backend] + f"#define FQ_LOCAL {FQ_LOCAL}\n" + BODY, backend)
