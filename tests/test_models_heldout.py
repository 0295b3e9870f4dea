"""The Hopper variant's held-out kernels: named before measuring, none of them a kernel the variant was
shaped on, every dwarf of Table 4.9 covered."""

from __future__ import annotations

from pytest_gpuperf.studies.ptx_model.dwarfs import DWARFS, THESIS_MAPE
from pytest_gpuperf.corpora.heldout import DESIGN_KERNELS, HELD_OUT


def test_the_design_kernels_are_the_dwarf_kernels():
    assert sorted(DESIGN_KERNELS) == sorted(d.name for d in DWARFS)


def test_no_held_out_kernel_was_used_to_shape_the_variant_and_every_dwarf_has_one():
    names = [h.kernel for h in HELD_OUT]
    assert len(set(names)) == len(names)
    assert not set(names) & set(DESIGN_KERNELS)
    assert {h.dwarf for h in HELD_OUT} == set(THESIS_MAPE)
