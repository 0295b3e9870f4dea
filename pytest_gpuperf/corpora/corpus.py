"""The kernel corpus of the sampled-kernel models (Dao, ch. 2): 24 element-wise and small-reduction
kernels covering memory-bound, compute-bound (FMA chains, transcendental functions, integer mixing),
divergent, irregular-access and local-memory behaviour.

All share one signature ``(const float* a, const float* b, float* c, int n)`` over a 1-D NDRange, so
a *sample* is the same launch with fewer work-groups: the first ``k`` groups do exactly the work they
do in the full run (the thesis samples the first work-groups, §2.5 step 2), with no offset and no
guard — the measurement of the sampled groups is the measurement of those groups' real work.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..devices.dialect import portable

_SIG = "(GLOBAL const float* RESTRICT a, GLOBAL const float* RESTRICT b, GLOBAL float* RESTRICT c, int n)"


@dataclass(frozen=True)
class CorpusKernel:
    """One corpus kernel; ``body`` uses ``i`` (= GID), ``a``, ``b``, ``c``, ``n``."""

    name: str
    body: str
    local_mem: bool = False

    def source(self, backend: str) -> str:
        text = (f"KERNEL void {self.name}{_SIG} {{\n  int i = GID;\n"
                + ("" if self.local_mem else "  if (i >= n) return;\n") + self.body + "\n}\n")
        return portable(text, backend)


def _poly(name: str, k: int) -> CorpusKernel:
    return CorpusKernel(name, f"  float x = a[i], y = b[i];\n  for (int j = 0; j < {k}; ++j) x = x * 0.999f + y;\n"
                              "  c[i] = x;")


CORPUS: tuple[CorpusKernel, ...] = (
    CorpusKernel("copy", "  c[i] = a[i];"),
    CorpusKernel("scale", "  c[i] = 2.5f * a[i];"),
    CorpusKernel("vadd", "  c[i] = a[i] + b[i];"),
    CorpusKernel("triad", "  c[i] = a[i] + 1.5f * b[i];"),
    CorpusKernel("axpby", "  c[i] = 2.0f * a[i] + 3.0f * b[i];"),
    CorpusKernel("trig", "  c[i] = sinf(a[i]) * b[i] + cosf(b[i]);"),
    CorpusKernel("explog", "  c[i] = expf(a[i]) * logf(1.0f + fabsf(b[i]));"),
    CorpusKernel("sqrtdiv", "  c[i] = sqrtf(fabsf(a[i]) + 1.0f) / (b[i] * b[i] + 1.0f);"),
    _poly("poly8", 8),
    _poly("poly32", 32),
    _poly("poly128", 128),
    CorpusKernel("intmix", "  unsigned int h = (unsigned int)(a[i] * 1000.0f) ^ (unsigned int)i;\n"
                           "  for (int j = 0; j < 16; ++j) { h ^= h << 13; h ^= h >> 17; h ^= h << 5; }\n"
                           "  c[i] = (float)(h & 1023u);"),
    CorpusKernel("branchy", "  float x = a[i];\n  if (i & 1) { for (int j = 0; j < 24; ++j) x = x * 0.99f + 1.0f; }\n"
                            "  else { x = x + b[i]; }\n  c[i] = x;"),
    CorpusKernel("gather", "  c[i] = a[(int)(((long)i * 17) % n)];"),
    CorpusKernel("reverse", "  c[i] = a[n - 1 - i];"),
    CorpusKernel("stencil3", "  float l = i > 0 ? a[i - 1] : 0.0f, r = i + 1 < n ? a[i + 1] : 0.0f;\n"
                             "  c[i] = 0.25f * l + 0.5f * a[i] + 0.25f * r;"),
    CorpusKernel("stencil7", "  float s = 0.0f;\n  for (int d = -3; d <= 3; ++d) { int j = i + d; "
                             "if (j >= 0 && j < n) s += a[j]; }\n  c[i] = s * (1.0f / 7.0f);"),
    CorpusKernel("group_reduce",
                 "  LOCAL_MEM float s[256];\n  int l = LID;\n  s[l] = i < n ? a[i] * b[i] : 0.0f;\n  BARRIER;\n"
                 "  for (int w = LSIZE / 2; w > 0; w >>= 1) { if (l < w) s[l] += s[l + w]; BARRIER; }\n"
                 "  if (l == 0) c[GROUP] = s[0];", local_mem=True),
    CorpusKernel("local_reverse",
                 "  LOCAL_MEM float s[256];\n  int l = LID;\n  s[l] = i < n ? a[i] : 0.0f;\n  BARRIER;\n"
                 "  if (i < n) c[i] = s[LSIZE - 1 - l] + b[i];", local_mem=True),
    CorpusKernel("dot16", "  float s = 0.0f;\n  for (int k = 0; k < 16; ++k) { int j = (i + k * 4099) % n; "
                          "s += a[j] * b[j]; }\n  c[i] = s;"),
    CorpusKernel("matvec64", "  float s = 0.0f;\n  int row = i & 63;\n"
                             "  for (int k = 0; k < 64; ++k) s += a[row * 64 + k] * b[k];\n  c[i] = s;"),
    CorpusKernel("sinloop", "  float x = a[i];\n  for (int j = 0; j < 8; ++j) x = sinf(x) + b[i];\n  c[i] = x;"),
    CorpusKernel("minmax", "  c[i] = fmaxf(a[i], b[i]) - fminf(a[i], b[i]);"),
    CorpusKernel("blend", "  float x = a[i], y = b[i];\n  c[i] = x > y ? x * x : y * y + 1.0f;"),
)


def by_name(name: str) -> CorpusKernel:
    for k in CORPUS:
        if k.name == name:
            return k
    raise KeyError(f"no corpus kernel {name!r}; known: {', '.join(k.name for k in CORPUS)}")
