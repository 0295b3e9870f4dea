"""Every power-corpus kernel's PTX loops get a trip count (issue 16: the static model needs one per loop).

NVRTC's PTX has loops the CUDA source does not show: a run-time loop unrolled by four leaves a remainder
loop, CUDA's ``sinf``/``cosf`` inline a range-reduction loop; a kernel whose PTX loops and listed counts
disagree is left out of the corpus. This compiles every job offline (``python -m pytest_gpuperf.studies.static_power.collect
--check-ptx 90``, the CUDA backend's options for an H100, no GPU) with the NVRTC of ``GPUPERF_NVRTC_DIR``
in a subprocess, as tests/test_cuda_compile.py does, and checks that each job's counts match its PTX
loops one for one — and that they count what the source does."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from nvrtc_support import nvrtc_env

ROOT = Path(__file__).resolve().parents[1]

#: global memory instructions per work-item the source of each kernel with a PTX loop executes (NVRTC keeps
#: loop-invariant loads out of loops, as the PTX shows: sobol's 16 ``dirs[bit]``)
GLOBAL_PER_THREAD = {
    "trig": 3, "sinloop": 3,  # a[i], b[i], c[i] (the range reduction's table loads: 0 times)
    "matvec64": 2 * 64 + 1,  # a[row*64+k], b[k] for 64 k; c[i]
    "group_reduce": 3,  # a[i], b[i]; c[GROUP] (by thread 0, counted for all: Alg. 10 has no branch weights)
    "matvec_row": 2 * 128 + 1, "sgemm_naive": 2 * 1000 + 1,  # 2 loads per step, n = 128 / K = 1000; 1 store
    # bfs_step: level_in[v], row_ptr[v], row_ptr[v+1]; per edge cols[e], level_in[u], the store, the bound
    # row_ptr[v+1] reloaded after it (the store may alias it)
    "bfs_step": lambda row: 3 + 4 * row["trips"][0],  # (the mean count itself: test_power_corpus.py)
    "matrixMulCUDA": lambda row: 2 * int(512 * _scale(row) // 16) + 1,  # A, B per tile (width 512 × scale); C
    "needle_shared": 17 + 1 + 16 + 16,  # the 17 + 1 score loads, 16 ref loads, 16 score stores
    "scanExclusiveShared": 2, "mergeSortSharedKernel": 2,  # one load, one store
    "sobolGPU_kernel": 16 + 1,  # dirs[0..15] (hoisted), out[tid]
    "convolutionRowsKernel": 2 * 17 + 1,  # src, kern for 17 taps; dst
    "bfs_kernel1": 4 + 5 * 8,  # frontier, cost[v], row[v], row[v+1]; per edge col, cost[u], 2 stores, bound
}

def _scale(row: dict) -> float:
    """A dwarf configuration's problem scale (``scale=1.5`` or ``scale=0.5,block=256``)."""
    return float(dict(kv.split("=") for kv in row["config"].split(","))["scale"])


#: the range-reduction guard of CUDA's sinf/cosf in NVRTC 13's PTX: |x| < 105615.0f takes the fast path
GUARDS = r"""
import re, struct
from pytest_gpuperf.devices import recompile
from pytest_gpuperf.corpora.corpus import by_name
from pytest_gpuperf.studies.static_power.model_corpus import SIN_SLOW_PATH, SIN_ARG_MAX
for name in ("trig", "sinloop"):
    ptx = recompile.ptx_text(by_name(name).source("cuda"), "90")
    guards = re.findall(r"setp\.ltu\.f32\s+%p\d+, %f\d+, 0f([0-9A-F]{8});", ptx)
    assert all(struct.unpack(">f", bytes.fromhex(g))[0] == SIN_SLOW_PATH for g in guards), guards
    print(name, len(guards), ptx.count('.pragma "nounroll"'), SIN_ARG_MAX < SIN_SLOW_PATH)
"""


def test_every_corpus_kernels_ptx_loops_have_their_trip_counts():
    env = nvrtc_env()
    out = subprocess.run([sys.executable, "-m", "pytest_gpuperf.studies.static_power.collect", "--check-ptx", "90", "--json"],
                         capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-4000:]
    rows = json.loads(out.stdout)
    assert len(rows) == 404 and len({r["kernel"] for r in rows}) == 43
    for r in rows:
        assert r["trips"] is not None, r
        assert r["loops_in_ptx"] == len(r["trips"]), r
        # the one sanctioned difference from the list: a constant source loop unrolled completely
        assert r["how"] == "as listed" or (r["how"] == "the compiler unrolled every loop" and r["loops_in_ptx"] == 0
                                           and all(t == t and t > 0 for t in r["listed"])), r
    by = {r["kernel"]: r for r in rows}
    assert by["trig"]["loops_in_ptx"] == 2 and by["sinloop"]["loops_in_ptx"] == 8
    assert by["matvec_row"]["loops_in_ptx"] == 2 and by["sgemm_naive"]["loops_in_ptx"] == 2
    assert by["bfs_step"]["loops_in_ptx"] == 1 and by["matvec64"]["loops_in_ptx"] == 1
    # what a wrong count would show: the global memory instructions one work-item executes by those counts
    # are the source's, for every kernel with a PTX loop
    looped = [r for r in rows if r["loops_in_ptx"]]
    for r in looped:
        want = GLOBAL_PER_THREAD[r["kernel"]]
        want = want(r) if callable(want) else want
        assert r["global_per_thread"] == pytest.approx(want), (r, want)
    assert {r["kernel"] for r in looped} == set(GLOBAL_PER_THREAD)


def test_the_zero_counts_rest_on_the_sin_range_reduction_guard():
    """trig's two and sinloop's eight loops are each behind the |x| < 105615 fast-path guard, which the
    kernels' arguments (|x| ≤ 2.5) always take: the loops run 0 times."""
    env = nvrtc_env()
    out = subprocess.run([sys.executable, "-c", GUARDS], capture_output=True, text=True, env=env, cwd=ROOT,
                         timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.split("\n")[:2] == ["trig 2 2 True", "sinloop 8 8 True"], out.stdout
