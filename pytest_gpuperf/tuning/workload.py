"""Workload tuner (Dao §3.4.4, §3.5.1): detect kernels whose amount of work grows with the work-group
size, and remove that growth by the two-step index-space transformation.

Detection. The thesis profiles a few work-groups at different sizes and compares instruction counts.
OpenCL exposes no instruction counters, so :func:`detect` uses a static proxy for the count: a tree
reduction over the work-group (a loop halving/doubling a bound derived from ``get_local_size``:
log2(W) steps per work-item). The launch geometry is profiled at two sizes too (a fixed group count
makes the number of work-items grow with W) and reported; on its own it does not mark a kernel, since
a grid-stride loop (the histogram) spreads the same total work over more work-items.

Transformation. Step 1 fixes the work-group size the kernel *sees* at WARP_SIZE (the fewest
reduction steps, the fewest work-items); step 2 merges C of those virtual groups into one hardware
work-group of shape (WARP_SIZE, C) — a 2-D kernel whose second dimension C is the tuning parameter
(thesis Fig. 3.8). :func:`transform` rewrites the OpenCL text so every work-item still sees its
virtual group: the id/size built-ins are redefined, and every ``__local`` array gets one slice per
virtual group. The output must equal the untransformed kernel's (tested on every workload kernel).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

Local = tuple[int, ...]

_LOCAL_ARRAY = re.compile(r"__local\s+(\w+)\s+(\w+)\s*\[([^\]]+)\]\s*;")
_LOCAL_ARRAY_2D = re.compile(r"__local\s+\w+\s+\w+\s*\[[^\]]+\]\s*\[")
_REDUCTION_LOOP = re.compile(r"for\s*\([^;]*;[^;]*;[^)]*(>>=\s*1|<<=\s*1|/=\s*2|\*=\s*2)\s*\)")


@dataclass(frozen=True)
class WorkloadVerdict:
    grows: bool
    ndrange_growth: float  # work-items at 4·WARP / work-items at WARP (1.0 = no growth)
    reduction_steps: bool
    reason: str


def detect(source: str, ndrange_at: "callable", warp: int, max_size: int) -> WorkloadVerdict:
    """Does the kernel's total work grow with the work-group size? ``ndrange_at(local)`` returns the
    global size the benchmark launches for ``local`` (the profiled launch geometry)."""
    small = (warp,)
    big = (min(max_size, 4 * warp),)
    n_small = math.prod(ndrange_at(small))
    n_big = math.prod(ndrange_at(big))
    growth = n_big / n_small if n_small else 1.0
    reduction = bool(_REDUCTION_LOOP.search(source)) and "get_local_size" in source
    # More work-items alone is not more work: a grid-stride loop (histogram) spreads the same total
    # over them. Per-item instructions grow only with the log2(W) reduction steps, and the total
    # grows with them when the group count is fixed: both must hold (instruction-count proxy).
    grows = reduction
    why = []
    if growth > 1.5:
        why.append(f"work-items grow {growth:.1f}x from {small[0]} to {big[0]} per group (fixed group count)")
    if reduction:
        why.append("tree reduction over the work-group: log2(W) steps per work-item")
    elif growth > 1.5:
        why.append("no per-item growth (no reduction steps): not transformed")
    return WorkloadVerdict(grows, growth, reduction, "; ".join(why) or "work independent of the group size")


def transform(source: str, warp: int, merge: int) -> str:
    """The kernel text after step 1 (virtual groups of ``warp``) and step 2 (``merge`` = C of them
    per hardware group of shape (warp, C)). Only 1-D kernels with 1-D ``__local`` arrays qualify.

    The result still needs :func:`..devices.dialect.portable`: ``WL_FN`` (helper functions: ``inline`` in OpenCL,
    ``__device__ inline`` in CUDA) and ``LOCAL_PTR`` (a pointer into local/shared memory) come from it, and
    the built-ins are ``#undef``-ed first because the CUDA prelude defines them as macros."""
    if merge < 1 or warp < 1:
        raise ValueError(f"workload transformation needs warp ≥ 1 and C ≥ 1 (got warp={warp}, C={merge})")
    if "get_global_id(1)" in source or "get_local_id(1)" in source or "get_group_id(1)" in source:
        raise ValueError("the workload transformation applies to 1-D kernels only; this kernel uses dimension 1")
    if _LOCAL_ARRAY_2D.search(source):
        raise ValueError("the workload transformation slices 1-D __local arrays per virtual group; "
                         "this kernel declares a multi-dimensional __local array")
    prelude = f"""
#define __WL_W {int(warp)}
#define __WL_C {int(merge)}
WL_FN size_t __wl_vgroup(void) {{ return get_local_id(1); }}
WL_FN size_t __wl_lid(uint d) {{ return d == 0 ? get_local_id(0) : 0; }}
WL_FN size_t __wl_lsz(uint d) {{ return d == 0 ? (size_t)__WL_W : 1; }}
WL_FN size_t __wl_grp(uint d) {{ return d == 0 ? get_group_id(1) * __WL_C + get_local_id(1) : 0; }}
WL_FN size_t __wl_ngr(uint d) {{ return d == 0 ? get_num_groups(1) * __WL_C : 1; }}
WL_FN size_t __wl_gid(uint d) {{ return d == 0 ? __wl_grp(0) * __WL_W + get_local_id(0) : 0; }}
WL_FN size_t __wl_gsz(uint d) {{ return d == 0 ? __wl_ngr(0) * __WL_W : 1; }}
#undef get_local_id
#define get_local_id(d) __wl_lid(d)
#undef get_local_size
#define get_local_size(d) __wl_lsz(d)
#undef get_group_id
#define get_group_id(d) __wl_grp(d)
#undef get_num_groups
#define get_num_groups(d) __wl_ngr(d)
#undef get_global_id
#define get_global_id(d) __wl_gid(d)
#undef get_global_size
#define get_global_size(d) __wl_gsz(d)
"""

    def slice_local(m: re.Match[str]) -> str:
        t, name, n = m.group(1), m.group(2), m.group(3)
        return (f"__local {t} {name}__all[__WL_C * ({n})];\n"
                f"    LOCAL_PTR({t}) {name} = {name}__all + __wl_vgroup() * ({n});")

    body = _LOCAL_ARRAY.sub(slice_local, source)
    return prelude + body


def transformed_launch(virtual_groups: int, warp: int, merge: int) -> tuple[Local, Local, int]:
    """(global, local, launched virtual groups): the virtual group count is padded up to a multiple
    of C; kernels guard the extra groups as they guard any padded NDRange."""
    hw = -(-int(virtual_groups) // merge)
    return (warp, hw * merge), (warp, merge), hw * merge


def merge_values(warp: int, max_total: int) -> list[int]:
    """All C with C·WARP within the work-group limit (the tuning parameter of the transformed kernel)."""
    return list(range(1, max(1, max_total // warp) + 1))
