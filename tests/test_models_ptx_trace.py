"""The PTX trace (``studies.ptx_model.ptx_trace``) runs committed PTX of the dwarf kernels on host buffers: it must
compute what the kernel computes (vector add, transpose, a tiled multiply through shared memory and barriers) and count
the sectors a warp's accesses fall in (coalesced, strided, reused)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pytest_gpuperf.studies.ptx_model import ptx_trace as tr
from pytest_gpuperf.studies.ptx_model.dwarfs import DWARFS

PTX = Path(__file__).parent / "data" / "models"


def _launch(name: str, scale: float = 0.25, block: int = 256) -> tuple[tr.Tracer, tr.HostMemory, tuple[int, int, int]]:
    d = next(d for d in DWARFS if d.name == name)
    shape = d.shape(scale, block)
    mem = tr.HostMemory()
    args = [a if isinstance(a, tr.HostBuffer) else int(a) if isinstance(a, (int, np.integer)) else float(a)
            for a in d.inputs(mem, shape)]
    grid = (shape.grid, 1, 1)
    return tr.Tracer((PTX / f"{name}.ptx").read_text(), name, mem, args, grid, (shape.block, 1, 1)), mem, grid


def _f32(buf: tr.HostBuffer) -> np.ndarray:
    return buf.data.view(np.float32)


def test_vector_add_computes_c_and_streams_exactly_the_bytes_it_names():
    tracer, mem, grid = _launch("vectorAdd")
    a, b, c = (_f32(x) for x in mem.buffers[:3])
    t = tracer.block((3, 0, 0))
    assert np.array_equal(c[3 * 256:4 * 256], (a + b)[3 * 256:4 * 256]) and not c[:256].any()  # one block's part
    assert t.requested_bytes == 256 * 12 == t.request_sectors * tr.SECTOR == t.unique_sectors * tr.SECTOR


def test_a_naive_transpose_stores_one_sector_per_lane():
    tracer, mem, grid = _launch("transposeNaive")
    t = tracer.block((0, 0, 0))
    w = int(np.sqrt(mem.buffers[1].nbytes // 4))
    out, src = _f32(mem.buffers[0]).reshape(w, w), _f32(mem.buffers[1]).reshape(w, w)
    assert np.array_equal(out[:256, 0], src[0, :256])  # block 0 reads row 0, writes column 0
    # loads: 4 bytes a lane, coalesced; stores: a lane each in its own sector
    assert t.requested_bytes == 256 * 8 and t.request_sectors * tr.SECTOR == 256 * (4 + 32)


def test_a_tiled_matrix_multiply_through_shared_memory_and_barriers_comes_out_right():
    tracer, mem, grid = _launch("matrixMulCUDA")  # 128 × 128 at scale 0.25: 8 × 8 tiles of 16 × 16
    t = tracer.block((9, 0, 0))  # tile (1, 1)
    w = 128
    c, a, b = (_f32(x).reshape(w, w) for x in mem.buffers[:3])
    want = (a.astype(np.float64) @ b.astype(np.float64))[16:32, 16:32]
    assert np.allclose(c[16:32, 16:32], want, rtol=1e-5) and not c[:16, :16].any()
    # each of the 8 steps loads a 16 × 16 tile of A and of B, a row of 16 floats (two sectors) per load
    assert t.requested_bytes == 256 * 4 * (2 * 8 + 1) == t.unique_sectors * tr.SECTOR


def test_a_row_convolution_reuses_its_neighbours_sectors():
    tracer, _, _ = _launch("convolutionRowsKernel")
    t = tracer.block((5, 0, 0))
    # every output reads 17 neighbours: the warp instructions touch ~13× the sectors the block needs once
    assert t.requested_bytes > 8 * t.unique_sectors * tr.SECTOR and t.request_sectors > 8 * t.unique_sectors


def test_an_address_outside_every_buffer_is_an_error():
    mem = tr.HostMemory()
    buf = mem.empty(64)
    assert mem.at(buf.base + 60, 4) == (buf, 60)
    with pytest.raises(tr.TraceError, match="lies in no buffer"):
        mem.at(buf.base + 62, 4)


def test_sampled_blocks_are_the_first_and_the_last():
    assert tr.sample_blocks((10, 1, 1), 2) == [(0, 0, 0), (9, 0, 0)]
    assert tr.sample_blocks((4, 3, 1), 2) == [(0, 0, 0), (3, 2, 0)]
    assert tr.sample_blocks((1, 1, 1), 2) == [(0, 0, 0)]
