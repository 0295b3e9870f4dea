"""Cubin integrity and the byte-identity check behind the recompile fallback of the SASS proof."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from pytest_gpuperf.devices import elf, recompile, sass
from pytest_gpuperf.errors import ProbeVerificationError

CUBIN = (Path(__file__).parent / "data" / "probes" / "lat_fp32_fma.cubin").read_bytes()


def test_sections_and_function_code():
    names = [s.name for s in elf.sections(CUBIN)]
    assert ".text.lat_fp32_fma" in names and ".nv.info" in names
    code = elf.function_code(CUBIN, "lat_fp32_fma")
    assert len(code) % 16 == 0 and len(code) > 96 * 16  # ≥ the 96 unrolled FFMAs, 16 bytes each
    assert elf.header_problem(CUBIN) is None
    with pytest.raises(KeyError):
        elf.function_code(CUBIN, "nope")


def test_truncated_cubin_is_diagnosed():
    shoff = struct.unpack_from("<Q", CUBIN, 0x28)[0]
    assert "truncated" in elf.header_problem(CUBIN[:shoff + 10])
    assert "not an ELF" in elf.header_problem(b"// PTX")
    # one byte short: cuobjdump says "does not contain device code" (what an H100 host showed)
    assert "truncated by 1 bytes" in elf.header_problem(CUBIN[:-1])


def test_identity_check_accepts_the_same_code_and_rejects_other_code():
    assert recompile.check_identical(CUBIN, CUBIN, ["lat_fp32_fma"])["lat_fp32_fma"] > 0
    code = elf.function_code(CUBIN, "lat_fp32_fma")
    tampered = CUBIN.replace(code, code[:-16] + bytes(16))
    with pytest.raises(ProbeVerificationError, match="not in the cubin that ran"):
        recompile.check_identical(tampered, CUBIN, ["lat_fp32_fma"])


def test_cupy_truncated_cubin_is_repaired_exactly():
    # CuPy's nvrtc.getCUBIN returns cubin[:size-1]; the missing byte is p_align's high byte, 0
    assert CUBIN[-1] == 0
    assert elf.repaired(CUBIN[:-1]) == CUBIN
    assert elf.repaired(CUBIN) is None  # complete: nothing to repair
    assert elf.repaired(CUBIN[:-100]) is None  # more than padding missing: not ours to guess


@pytest.mark.skipif(not sass.cuobjdump_candidates(), reason="no cuobjdump here (pip install nvidia-cuda-cuobjdump "
                    "nvidia-cuda-nvdisasm, or set $GPUPERF_CUOBJDUMP)")
def test_cuobjdump_rejects_the_short_cubin_and_reads_the_repaired_one():
    with pytest.raises(ProbeVerificationError, match="does not contain device code"):
        sass.disassemble(CUBIN[:-1])
    assert "lat_fp32_fma" in sass.parse(sass.disassemble(elf.repaired(CUBIN[:-1])))
