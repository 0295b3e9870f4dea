"""Per-SM limits of NVIDIA GPUs and the occupancy rules computed from them — the one place that knows
how many work-groups a compute unit holds at once.

The per-SM limits come from the one table of architectures (:data:`.architectures.ARCHITECTURES`,
CUDA C Programming Guide, "Technical Specifications per Compute Capability"); three rule sets over them. The rules differ *on purpose*:
each thesis the project reproduces defines its own, and the H100 baselines were measured with each as
printed, so each keeps its own function, named after its thesis:

* :func:`cuda_occupancy` — the CUDA Occupancy Calculator's allocation rules, as Lim (ch. III,
  Eqs. 3.1-3.5) uses them: warps per block rounded up, registers allocated per warp in units of
  ``reg_unit`` (0 blocks above ``max_regs_thread``), shared memory in granules plus the per-block
  system reservation (cc ≥ 8.0). Matches ``cuOccupancyMaxActiveBlocksPerMultiprocessor`` (checked in
  ``tests/test_devices_occupancy.py`` where CUDA exists).
* :func:`dao_saturation` — Dao's saturation point ``P_sat`` (§2.4): registers per warp in units of
  ``reg_unit``, but shared memory without granule or reservation and no per-thread register cap;
  at least one group.
* :func:`alavani_threads_per_sm` — Alavani's Algorithm 8 lines 4-8: threads per SM from block-level
  divisions (``regs × block`` registers, ``shared`` bytes, no allocation units); at least one block.

A compute capability that is not in the table is an :class:`~pytest_gpuperf.errors.UnsupportedDevice`
error: borrowing the H100's numbers for an unknown GPU would yield plausible, wrong predictions.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import ceil
from typing import Any, Mapping

from ..errors import UnsupportedDevice
from .architectures import ARCHITECTURES, SMLimits


def sm_limits(compute_capability: str, extra: Mapping[str, Any] | None = None, device: str = "") -> SMLimits:
    """Limits of a compute capability; values the CUDA driver reports (``DeviceInfo.extra``) override
    the table. Raises :class:`UnsupportedDevice` for a capability the table lacks (or none at all)."""
    arch = ARCHITECTURES.get(compute_capability)
    base = arch.sm if arch is not None else None
    if base is None:
        who = device or (f"compute capability {compute_capability}" if compute_capability else "this device")
        if compute_capability:
            why = (f"no per-SM limits for compute capability {compute_capability} (known: "
                   f"{', '.join(ARCHITECTURES)}); add its row to pytest_gpuperf/devices/architectures.py ARCHITECTURES "
                   "from the CUDA C Programming Guide's 'Technical Specifications per Compute Capability'")
        else:
            why = "no compute capability: occupancy models need an NVIDIA SM (CUDA, or NVIDIA OpenCL)"
        raise UnsupportedDevice(who, why)
    extra = extra or {}
    if not extra.get("max_threads_per_sm"):
        return base
    return SMLimits(int(extra["max_threads_per_sm"]) // base.warp,
                    int(extra.get("max_blocks_per_sm") or base.max_blocks),
                    int(extra.get("regs_per_sm") or base.regs), base.max_regs_thread, base.reg_unit,
                    int(extra.get("max_shared_per_sm") or base.shared),
                    int(extra.get("max_shared_per_block_optin") or base.shared_block),
                    base.shared_granule, base.shared_reserved, base.warp)


def device_limits(info: Any) -> SMLimits:
    """Limits of a device (a :class:`~pytest_gpuperf.devices.base.DeviceInfo`), naming it in any error."""
    return sm_limits(info.compute_capability, info.extra, device=f"{info.name} ({info.spec})")


def has_sm_model(info: Any) -> bool:
    """Whether the device is an NVIDIA SM the occupancy rules apply to (it reports a compute capability).
    A GPU with a capability the table lacks still *has* an SM: :func:`device_limits` then raises."""
    return bool(info.compute_capability) and not info.is_cpu


@dataclass(frozen=True)
class Occupancy:
    """The CUDA calculator's answer for one work-group shape."""

    blocks: int  # active work-groups per SM (Lim Eq. 3.1)
    warps: int  # active warps per SM
    occupancy: float  # active warps / max warps (Eq. 3.2)
    limiter: str  # "warps" | "blocks" | "registers" | "shared"


def cuda_occupancy(lim: SMLimits, threads: int, regs_per_thread: int, shared_per_block: int) -> Occupancy:
    """Theoretical occupancy of a work-group of ``threads`` work-items by the CUDA Occupancy
    Calculator's rules (Lim Eqs. 3.1-3.5). ``regs_per_thread`` 0 = unknown: no register limit."""
    if threads <= 0:
        raise ValueError(f"a work-group needs at least one work-item (got {threads})")
    warps_per_block = ceil(threads / lim.warp)
    limits = {"blocks": lim.max_blocks, "warps": lim.max_warps // warps_per_block}
    if regs_per_thread > lim.max_regs_thread:
        limits["registers"] = 0
    elif regs_per_thread > 0:
        per_warp = ceil(regs_per_thread * lim.warp / lim.reg_unit) * lim.reg_unit
        limits["registers"] = lim.regs // (per_warp * warps_per_block)
    if shared_per_block > lim.shared_block:
        limits["shared"] = 0
    elif shared_per_block > 0:
        need = ceil((shared_per_block + lim.shared_reserved) / lim.shared_granule) * lim.shared_granule
        limits["shared"] = lim.shared // need
    limiter = min(limits, key=lambda k: (limits[k], k != "warps"))
    blocks = max(0, int(limits[limiter]))
    warps = blocks * warps_per_block
    return Occupancy(blocks, warps, warps / lim.max_warps, limiter)


def dao_saturation(lim: SMLimits, local_size: int, regs_per_thread: int, shared_per_group: int,
                   warp: int = 32) -> tuple[int, str]:
    """Dao's saturation point ``P_sat`` (thesis §2.4): work-groups one SM keeps active, and what bounds
    it ("threads", "blocks", "registers", "local memory"). ``warp`` is the device's warp width."""
    if local_size <= 0:
        raise ValueError(f"local size must be positive, got {local_size}")
    warps = -(-local_size // warp)
    cands = {"threads": lim.max_threads // (warps * warp), "blocks": lim.max_blocks}
    if regs_per_thread:
        per_warp = -(-regs_per_thread * lim.warp // lim.reg_unit) * lim.reg_unit
        cands["registers"] = lim.regs // (per_warp * warps)
    if shared_per_group:
        cands["local memory"] = lim.shared // shared_per_group
    limit = min(cands, key=lambda k: cands[k])
    return max(1, cands[limit]), limit


def alavani_threads_per_sm(lim: SMLimits, block: int, regs_per_thread: int, shared_per_block: int) -> tuple[int, str]:
    """Alavani's Algorithm 8 lines 4-8: threads one SM holds per wave, and what bounds it ("threads",
    "blocks", "registers", "shared memory"), by whole-block divisions without allocation units."""
    if block <= 0:
        raise ValueError(f"block size must be positive, got {block}")
    per_block = {"threads": lim.max_threads // block, "blocks": lim.max_blocks}
    if regs_per_thread:
        per_block["registers"] = lim.regs // (regs_per_thread * block)
    if shared_per_block:
        per_block["shared memory"] = lim.shared // shared_per_block
    limit = min(per_block, key=lambda k: per_block[k])
    return max(1, per_block[limit]) * block, limit
