"""The NVIDIA GPU architectures the project's models know: one row per compute capability, the one
table every per-architecture figure is read from.

Each row holds what one source documents for that capability, and ``None`` where the project has no
figure (a model then says what it falls back to):

* ``sm`` — per-SM limits (CUDA C Programming Guide, "Technical Specifications per Compute Capability"):
  the occupancy rules (:mod:`.occupancy`) and everything built on them;
* ``units`` — functional units per SM (NVIDIA architecture whitepapers): the PTX model's scheduler
  (``studies.ptx_model.scheduler``);
* ``issue`` — warp schedulers and dispatch units per SM (whitepapers): the static power model's issue
  cycles (``studies.static_power.power_model``, Alavani Eq. 5.1).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping


@dataclass(frozen=True)
class SMLimits:
    """Per-SM hardware limits of one compute capability."""

    max_warps: int
    max_blocks: int
    regs: int  # 32-bit registers per SM
    max_regs_thread: int
    reg_unit: int  # register allocation unit (per warp)
    shared: int  # shared memory per SM usable by blocks (bytes)
    shared_block: int  # max shared per block (opt-in)
    shared_granule: int
    shared_reserved: int  # per-block system reservation (cc ≥ 8.0)
    warp: int = 32

    @property
    def max_threads(self) -> int:
        """Resident threads per SM."""
        return self.max_warps * self.warp


@dataclass(frozen=True)
class Architecture:
    """What the project knows of one compute capability."""

    name: str  # the architecture and the cards the row was taken for
    sm: SMLimits
    units: Mapping[str, int] | None = None  # functional units per SM: SP, INT, DP, SFU, LSU, M (misc. dispatch)
    issue: tuple[int, int] | None = None  # (warp schedulers, dispatch units) per SM: Kepler 4 × 2 per scheduler


#: Hopper GH100 SM = 4 partitions × (32 FP32, 16 INT32, 16 FP64, 4 SFU, 8 LD/ST); ``M`` (moves, branches,
#: barriers, parameter loads) is given one warp-wide dispatch per partition per cycle
ARCHITECTURES: Mapping[str, Architecture] = {
    "3.5": Architecture("Kepler: Tesla K20 (Alavani's example)", SMLimits(64, 16, 65536, 255, 256, 49152, 49152, 256, 0),
                        {"SP": 192, "INT": 192, "DP": 64, "SFU": 32, "LSU": 32, "M": 192}, (4, 8)),
    "5.0": Architecture("Maxwell", SMLimits(64, 32, 65536, 255, 256, 65536, 49152, 256, 0)),
    "5.2": Architecture("Maxwell: GTX Titan X (Dao's)", SMLimits(64, 32, 65536, 255, 256, 98304, 49152, 256, 0)),
    "6.0": Architecture("Pascal", SMLimits(64, 32, 65536, 255, 256, 65536, 49152, 256, 0)),
    "6.1": Architecture("Pascal", SMLimits(64, 32, 65536, 255, 256, 98304, 49152, 256, 0)),
    "7.0": Architecture("Volta", SMLimits(64, 32, 65536, 255, 256, 98304, 98304, 256, 0),
                        {"SP": 64, "INT": 64, "DP": 32, "SFU": 16, "LSU": 32, "M": 128}, (4, 4)),
    "7.5": Architecture("Turing", SMLimits(32, 16, 65536, 255, 256, 65536, 65536, 256, 0)),
    "8.0": Architecture("Ampere: A100", SMLimits(64, 32, 65536, 255, 256, 167936, 166912, 128, 1024),
                        {"SP": 64, "INT": 64, "DP": 32, "SFU": 16, "LSU": 32, "M": 128}, (4, 4)),
    "8.6": Architecture("Ampere", SMLimits(48, 16, 65536, 255, 256, 102400, 101376, 128, 1024), issue=(4, 4)),
    "8.9": Architecture("Ada Lovelace", SMLimits(48, 24, 65536, 255, 256, 102400, 101376, 128, 1024), issue=(4, 4)),
    "9.0": Architecture("Hopper: H100, H200", SMLimits(64, 32, 65536, 255, 256, 233472, 232448, 128, 1024),
                        {"SP": 128, "INT": 64, "DP": 64, "SFU": 16, "LSU": 32, "M": 128}, (4, 4)),
}

#: the architecture a model falls back to where a capability's row lacks its figure (the cards measured)
REFERENCE = "9.0"


def sm_arch(compute_capability: str) -> str:
    """``"9.0"`` → ``"sm_90"``: the capability as compilers and PTX name it."""
    return "sm_" + compute_capability.replace(".", "")
