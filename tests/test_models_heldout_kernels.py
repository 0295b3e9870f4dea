"""The PTX model's held-out kernels, ported (``corpora.heldout_kernels``): one port per kernel the held-out
list names, each computing on PoCL what its NumPy reference computes (the same text the GPU runs as CUDA),
a wrong port caught, the problem's buffers the bytes its shape claims, the tree of findK one that its walk
descends, a launch the kernel's text cannot take refused with a message naming the rule, and the study's
timing of a kernel that moves its own cursors restoring them before every launch."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from pytest_gpuperf.helpers import Measurer
from pytest_gpuperf.corpora import heldout_port, heldout_rodinia
from pytest_gpuperf.studies.ptx_model import ptx_study, ptx_sweep
from pytest_gpuperf.corpora.heldout_kernels import PORTS, by_name
from pytest_gpuperf.corpora.heldout import DESIGN_KERNELS, HELD_OUT
from pytest_gpuperf.timing.measure import MeasureConfig

NAMES = [p.kernel for p in PORTS]


def test_every_held_out_kernel_is_ported_once_and_none_is_a_design_kernel():
    assert NAMES == [h.kernel for h in HELD_OUT]
    assert not set(NAMES) & set(DESIGN_KERNELS)
    assert all(p.differs and p.held_out.kernel == p.kernel for p in PORTS)


@pytest.mark.parametrize("name", NAMES)
def test_each_port_computes_its_numpy_reference_on_pocl(cl_device, name):
    port = by_name(name)
    shape, problem = port.build(port.tiny)
    assert heldout_port.mismatches(cl_device, port, shape, problem) == []


def test_the_check_catches_a_wrong_port(cl_device):
    fan2 = by_name("Fan2")
    wrong = dataclasses.replace(fan2, text=fan2.text.replace("-= m_cuda[Size * (xidx + 1 + t) + t]",
                                                             "+= m_cuda[Size * (xidx + 1 + t) + t]"))
    shape, problem = wrong.build(wrong.tiny)
    issues = heldout_port.mismatches(cl_device, wrong, shape, problem)
    assert len(issues) == 1 and issues[0].startswith("Fan2 at ") and "a: " in issues[0], issues


def test_a_launch_that_leaves_a_cursor_moved_is_restored_before_the_next(cl_device):
    """findK walks the tree by cursors it updates in place: a second launch on the same buffers starts at
    the leaves and finds other records, which is why a timed run restores them (``restore``)."""
    port = by_name("findK")
    shape, problem = port.build(port.tiny)
    assert problem.restore == ("currKnode", "offset")
    kern = cl_device.compile(port.source("opencl", shape), port.kernel)
    bufs = {n: cl_device.to_device(a) for n, a in problem.buffers.items()}
    args = [bufs[a] if isinstance(a, str) else a for a in problem.args]
    want = problem.reference()["ans"]
    answers = []
    for _ in range(2):
        cl_device.launch(kern, shape.global_size, shape.local_size, args)
        answers.append(cl_device.to_host(bufs["ans"], np.int32))
    assert np.array_equal(answers[0], want)
    cl_device.copy(bufs["ans"], cl_device.to_device(np.full_like(want, -1)), want.nbytes)
    cl_device.launch(kern, shape.global_size, shape.local_size, args)
    assert not np.array_equal(cl_device.to_host(bufs["ans"], np.int32), want)  # the cursors were not restored


@pytest.mark.parametrize("name", NAMES)
def test_a_problem_holds_the_bytes_its_shape_claims(name):
    port = by_name(name)
    shape, problem = port.build(port.tiny)
    assert problem.bytes == shape.bytes
    assert shape.grid * shape.block == int(np.prod(shape.global_size)) and shape.block == int(np.prod(shape.local_size))


def test_the_b_tree_routes_every_key_to_its_record():
    """findK's walk in NumPy over the tree ``btree`` builds: at each level the one slot with
    ``keys[i] ≤ k < keys[i+1]``, then the leaf slot holding ``k``."""
    keys = np.sort(np.random.default_rng(1).choice(1 << 20, 3000, replace=False)).astype(np.int32)
    fanout = 8
    nodes = heldout_rodinia.btree(keys, fanout)
    levels = heldout_rodinia.btree_levels(len(keys), fanout)
    assert levels == [375, 47, 6, 1] and len(nodes) == sum(levels) and nodes.itemsize == 2068
    for k in keys[::37]:
        node = 0
        for _ in range(len(levels) - 1):
            row = nodes["keys"][node]
            (slot,) = np.flatnonzero((row[:-1] <= k) & (row[1:] > k))
            node = nodes["indices"][node, slot]
        assert nodes["is_leaf"][node] == 1
        assert keys[nodes["indices"][node, list(nodes["keys"][node]).index(k)]] == k


@pytest.mark.parametrize("name, params, match", [
    ("lud_internal", dict(bs=16, dim=100, offset=0), "multiples of the block side"),
    ("Fan2", dict(bs=4, size=64, t=63), "outside 0"),
    ("dynproc_kernel", dict(bs=32, height=16, cols=100), "leaves no column"),
    ("bitonicSortShared", dict(length=48, n=1024), "power of two"),
    ("findK", dict(queries=4, records=100, fanout=256), "one node"),
    ("quasirandomGeneratorKernel", dict(bx=64, grid=3, n=1000), "not a multiple"),
    ("srad_cuda_1", dict(bs=16, rows=16, cols=64), "at least two"),
])
def test_a_launch_the_text_cannot_take_is_refused(name, params, match):
    with pytest.raises(ValueError, match=match):
        by_name(name).shape(params)


def test_the_far_field_tables_are_the_solver_s():
    """euler3d's far field: ρ 1.4, Mach 1.2 along x, p 1: momentum (1.68, 0, 0) and energy 3.508."""
    ff = heldout_rodinia.far_field()
    assert np.allclose(ff["ff_variable"], (1.4, 1.68, 0.0, 0.0, 3.508), rtol=1e-6)
    assert np.allclose(ff["ff_fc_momentum_x"], (1.2 * 1.68 + 1.0, 0.0, 0.0), rtol=1e-6)
    assert np.allclose(ff["ff_fc_density_energy"], (1.2 * 4.508, 0.0, 0.0), rtol=1e-6)
    assert all(f"{float(v)!r}f" in by_name("cuda_compute_flux").text for v in ff["ff_variable"])


def test_a_timed_launch_restores_the_cursors_before_each_launch(cl_device):
    """The study's timing path on a real device: with findK's cursors restored before every launch, the
    last of many timed launches walks from the root to each query's leaf; without, it does not."""
    port = by_name("findK")
    study = ptx_sweep.by_name("findK")
    shape, problem = port.build(port.tiny)
    kern = cl_device.compile(port.source("opencl", shape), port.kernel)
    measurer = Measurer(cl_device, MeasureConfig(timeout_s=30.0))
    found = []
    for keep in (True, False):
        args, restore = ptx_study.upload(cl_device, study, shape, problem)
        m = ptx_study.time_launch(cl_device, measurer, kern, shape, args, restore if keep else [])
        assert len(m.samples) >= 10
        found.append(np.array_equal(cl_device.to_host(args[4], np.int64), problem.reference()["currKnode"]))
    assert found == [True, False]
