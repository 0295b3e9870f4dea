"""Alavani's scheduling algorithms (thesis §4.4) on hand-worked examples."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import pytest

from pytest_gpuperf.studies.ptx_model import cfg, ptx, ptx_calibration, scheduler
from pytest_gpuperf.studies.ptx_model.ptx_latency import LatencyTable, global_latency_k20, latencies
from ptx_study_support import CLASSES

K20 = {"SP": 192, "INT": 192, "DP": 64, "SFU": 32, "LSU": 32, "M": 192}


def block_of(body: str) -> cfg.Block:
    k = ptx.parse(".visible .entry k()\n{\n" + body + "\n}\n")
    return cfg.build(k).blocks[0]


def lat_of(table: dict[str, float]):
    return lambda ins: table[ins.klass]


def test_figure_4_6_illustration():
    """Thesis Fig. 4.6 on a Tesla K20: add 9, ld 315, nTW = 256 threads, R[SP] = 192, R[LSU] = 32.
    C8 (add) occupies SP 0–10; C9 (independent add) waits for SP → 10; M1 (load after C8) starts at 10
    (9 + 1 pipeline) and M2 waits for the LSU held by M1; C11 uses both loads."""
    b = block_of("add.f32 %f1, %f0, %f0;\n add.f32 %f2, %f0, %f0;\n ld.global.f32 %f3, [%rd1];\n"
                 " ld.global.f32 %f4, [%rd2];\n add.f32 %f5, %f3, %f4;")
    lat = lat_of({"addf": 9, "ld.global": 315})
    # ld depends on nothing here; make M1 depend on C8 as in the figure:
    b2 = block_of("add.s64 %rd1, %rd0, 4;\n add.f32 %f2, %f0, %f0;\n ld.global.f32 %f3, [%rd1];\n"
                  " ld.global.f32 %f4, [%rd1+4];\n add.f32 %f5, %f3, %f4;")
    lat2 = lambda ins: {"adds": 9, "addf": 9, "ld.global": 315}[ins.klass]  # noqa: E731
    units = dict(K20, INT=192)
    d_add = 9 + 1 * (2 - 1)  # ceil(256/192) = 2 batches → 10 cycles
    d_ld = 315 + 1 * (8 - 1)  # ceil(256/32) = 8 batches → 322 cycles
    # M1 at 10 (after C8), M2 waits for LSU: 10 + 322; C11 after M2 finishes
    expected = 10 + d_ld + d_ld + d_add
    assert scheduler.schedule_block(b2, lat2, units, 256) == expected
    # without the dependence the two loads start at 0 and 322
    assert scheduler.schedule_block(b, lat, units, 256) == 2 * d_ld + d_add


def test_resource_reservation_packs_different_units_in_parallel():
    b = block_of("add.f32 %f1, %f0, %f0;\n add.s32 %r1, %r0, 1;\n mul.f32 %f2, %f0, %f0;")
    lat = lat_of({"addf": 4, "adds": 4, "mulf": 4})
    units = {"SP": 128, "INT": 64, "M": 128, "LSU": 32, "DP": 64, "SFU": 16}
    # SP: add 0–4, mul 4–8 (same unit, reserved); INT add 0–4 with 128 threads → 2 batches = 5 cycles
    assert scheduler.schedule_block(b, lat, units, 128) == 8


def test_cfg_longest_path_with_loop_multiplier():
    text = (".visible .entry k()\n{\n mov.u32 %r1, 0;\n$L1:\n add.s32 %r1, %r1, 1;\n setp.lt.s32 %p1, %r1, %r2;\n"
            " @%p1 bra $L1;\n ret;\n}\n")
    g = cfg.build(ptx.parse(text))
    assert len(g.loops) == 1
    lat = lambda ins: {"mov": 2, "adds": 10, "setp": 5, "bra": 1}[ins.klass]  # noqa: E731
    units = {"SP": 1, "INT": 1, "M": 1, "LSU": 1, "DP": 1, "SFU": 1}
    # one thread: loop block = add 10 → setp 5 → bra 1 = 16 cycles × 7 trips; entry 2; ret 1
    assert scheduler.schedule_cfg(g, lat, units, 1, [7]) == 2 + 16 * 7 + 1


def test_occupancy_and_waves():
    occ = scheduler.occupancy("9.0", 256, regs=32, shared=0)
    assert (occ.threads_per_sm, occ.limit) == (2048, "threads")
    occ = scheduler.occupancy("9.0", 256, regs=128, shared=0)
    assert (occ.threads_per_sm, occ.limit) == (512, "registers")
    occ = scheduler.occupancy("9.0", 1024, regs=16, shared=100_000)
    assert occ.limit in ("shared memory", "threads") and occ.threads_per_sm == 2048
    text = (Path(__file__).parent / "data" / "models" / "vectorAdd.ptx").read_text()
    g = cfg.build(ptx.parse(text))
    table = LatencyTable({k: 4.0 for k in ("addf", "adds", "mul", "mads", "setp", "mov", "cvt")} | {"and": 4.0},
                         {}, 500.0, "test")
    cal = scheduler.Calibration((2e-6, 0.0), (1e12, 1.0, 1e-6), (1e13, 1.0, 1e-6))
    # 132 SMs × 2048 threads per wave; 132 × 8 × 3 blocks of 256 → 3 waves
    p = scheduler.predict(g, table, cal, grid=132 * 8 * 3, block=256, regs=16, shared=0, trips=[], n_sm=132,
                          clock_hz=1e9)
    assert p.waves == 3
    assert p.counts[0] == 3 and p.counts[1] == 12  # two loads + one store of 4 bytes per thread
    one = scheduler.predict(g, table, cal, grid=132 * 8, block=256, regs=16, shared=0, trips=[], n_sm=132,
                            clock_hz=1e9)
    assert p.d_kernel_cycles == pytest.approx(3 * one.d_kernel_cycles)
    assert p.seconds > one.seconds > p.launch_s


def test_access_bytes_and_resources():
    b = block_of("ld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd1];\n st.global.f64 [%rd2], %fd1;\n"
                 " ld.global.u8 %rs1, [%rd3];")
    assert [scheduler.access_bytes(i) for i in b.instructions] == [16, 8, 1]
    assert b.instructions[0].defs == ["%f1", "%f2", "%f3", "%f4"]
    assert scheduler.resource_of("ld.global") == "LSU" and scheduler.resource_of("dfma") == "DP"
    assert scheduler.resource_of("sfu") == "SFU" and scheduler.resource_of("fma") == "SP"


def test_latency_table_reads_probe_results(tmp_path):
    key = "some-gpu"
    (tmp_path / "results" / key).mkdir(parents=True)
    (tmp_path / "results" / key / "probes-cuda.json").write_text(
        '{"metrics": [{"name": "latency.fp32.fma.cycles", "value": 4.0, "unit": "cycles"},'
        ' {"name": "memory.dram.latency.cycles", "value": 800.0, "unit": "cycles"},'
        ' {"name": "memory.shared.latency.cycles", "value": 30.0, "unit": "cycles"}]}')
    t = latencies(tmp_path, key, "cuda", 1980.0)
    assert t.cycles["fma"] == 4.0 and "probes-cuda.json" in t.sources["fma"]
    assert t.cycles["st.shared"] == 30.0 and t.of("ld.global", 1000) == 800.0
    assert "Table 3.2" in t.sources["addf"]  # no probe for it: the thesis' fallback, and it says so
    empty = latencies(tmp_path, "other", "cuda", 1980.0)
    assert empty.of("ld.global", 1000) == pytest.approx(global_latency_k20(1000))


def test_latency_table_substitutes_and_scales(tmp_path):
    """Classes the probes do not chase take the int-add chain (labelled), ``cvt`` is half the F2I+I2F round
    trip, ``sfu`` prefers the MUFU.SIN intrinsic, and a class with no probe at all (int div) falls back."""
    key = "gpu"
    (tmp_path / "results" / key).mkdir(parents=True)
    (tmp_path / "results" / key / "probes-cuda.json").write_text(
        '{"metrics": [{"name": "latency.int32.add.cycles", "value": 4.5, "unit": "cycles"},'
        ' {"name": "latency.fp32.f32_s32_f32.cycles", "value": 12.0, "unit": "cycles"},'
        ' {"name": "latency.fp32.sin_intr.cycles", "value": 18.0, "unit": "cycles"},'
        ' {"name": "latency.fp32.rsqrt.cycles", "value": 40.0, "unit": "cycles"},'
        ' {"name": "latency.fp64.fma.ns", "value": 4.0, "unit": "ns"},'
        ' {"name": "memory.global.latency.unloaded.cycles", "value": 700.0, "unit": "cycles"}]}')
    t = latencies(tmp_path, key, "cuda", 2000.0)
    assert t.of("setp", 1) == t.of("mov", 1) == t.of("bra", 1) == t.of("and", 1) == 4.5
    assert "substitute" in t.sources["setp"] and "substitute" not in t.sources["adds"]
    assert t.of("cvt", 1) == 6.0 and "x0.5" in t.sources["cvt"]
    assert t.of("sfu", 1) == 18.0
    assert t.of("divs", 1) == 815 and "Table 3.2" in t.sources["divs"]
    assert t.of("dfma", 1) == 232  # an ``.ns`` metric name is not a ``.cycles`` name: not mapped
    assert t.of("ld.global", 10**6) == 700.0 and "unloaded" in t.global_source


def test_cache_miss_penalty_eq_4_12():
    """Eq. 4.12 by hand: 1M threads × 2 accesses of 4 B = 8 MiB over 2 waves × 2 MiB L2 → 2 misses × 600 cycles."""
    assert scheduler.cache_miss_cycles(1 << 20, 2.0, 8.0, 2, 2 << 20, 600.0) == pytest.approx(1200.0)
    assert scheduler.cache_miss_cycles(1 << 20, 0.0, 0.0, 2, 2 << 20, 600.0) == 0.0
    assert scheduler.cache_miss_cycles(1 << 20, 2.0, 8.0, 2, 0, 600.0) == 0.0


def test_prediction_info_has_registers_and_occupancy():
    """Each prediction records the kernel's registers, shared bytes and resident-thread occupancy."""
    text = (Path(__file__).parent / "data" / "models" / "vectorAdd.ptx").read_text()
    graph = cfg.build(ptx.parse(text, "vectorAdd"))
    table = LatencyTable({**{k: 4.0 for k in ("addf", "mulf", "fma", "adds", "mul", "mads", "and", "setp", "mov",
                                                 "cvt", "ld.shared", "st.shared", "sfu", "sqrt", "divf", "divs")}},
                         {}, 600.0, "test")
    cal = scheduler.Calibration((3e-6, 0.0), (3e12, 1.0, 1e-6), (3e13, 1.0, 1e-6))
    p = scheduler.predict(graph, table, cal, grid=4096, block=256, regs=64, shared=0, trips=[], n_sm=132,
                          clock_hz=1.98e9, l2_bytes=50 << 20)
    info = p.info()
    assert info["regs_per_thread"] == 64 and info["occupancy_limit"] == "registers"
    assert info["threads_per_sm"] == 1024 and info["occupancy"] == 0.5
    assert p.cm_penalty_s > 0 and p.seconds > p.launch_s + p.gm_penalty_s


def test_latency_table_falls_back_to_the_other_api_of_the_same_device(tmp_path):
    key = "gpu"
    (tmp_path / "results" / key).mkdir(parents=True)
    (tmp_path / "results" / key / "probes-cuda.json").write_text(
        '{"metrics": [{"name": "latency.fp32.fma.cycles", "value": 4.0, "unit": "cycles"}]}')
    (tmp_path / "results" / key / "probes-opencl.json").write_text(
        '{"metrics": [{"name": "latency.fp32.fma.cycles", "value": 9.0, "unit": "cycles"},'
        ' {"name": "latency.fp32.add.cycles", "value": 4.1, "unit": "cycles"}]}')
    t = latencies(tmp_path, key, "cuda", 1980.0)
    assert t.of("fma", 1) == 4.0 and "probes-cuda.json" in t.sources["fma"]  # own API first
    assert t.of("addf", 1) == 4.1 and "opencl, same device" in t.sources["addf"]


def test_latency_table_prefers_the_probe_baseline_and_refuses_a_malformed_one(tmp_path):
    """``baselines/<key>.json`` (read through the baseline store) wins over the results, per metric; a
    malformed baseline is an error naming the file, never silently an empty one."""
    from pytest_gpuperf import BASELINE_SCHEMA
    from pytest_gpuperf.errors import BaselineFileError

    key = "gpu"
    (tmp_path / "baselines").mkdir()
    entry = {"value": 4.2, "unit": "cycles", "better": "lower", "tolerance": {"rel": 0.05}}
    (tmp_path / "baselines" / f"{key}.json").write_text(json.dumps(
        {"schema": BASELINE_SCHEMA, "device": {"key": key},
         "backends": {"cuda": {"metrics": {"latency.fp32.fma.cycles": entry}},
                      "opencl": {"metrics": {"latency.fp32.add.cycles": entry}}}}))
    (tmp_path / "results" / key).mkdir(parents=True)
    (tmp_path / "results" / key / "probes-cuda.json").write_text(
        '{"metrics": [{"name": "latency.fp32.fma.cycles", "value": 9.0, "unit": "cycles"},'
        ' {"name": "latency.fp32.add.cycles", "value": 3.9, "unit": "cycles"}]}')
    t = latencies(tmp_path, key, "cuda", 1980.0)
    assert t.of("fma", 1) == 4.2 and t.sources["fma"] == f"probe baseline {key}.json: latency.fp32.fma.cycles"
    assert t.of("addf", 1) == 3.9 and "probes-cuda.json" in t.sources["addf"]  # the opencl section is not read
    (tmp_path / "baselines" / f"{key}.json").write_text('{"backends": {}}')
    with pytest.raises(BaselineFileError, match=f"{key}.json"):
        latencies(tmp_path, key, "cuda", 1980.0)
    # the run's --gpuperf-baseline-dir wins over <root>/baselines (the GPU session writes its own copy)
    other = tmp_path / "session-baselines"
    other.mkdir()
    (other / f"{key}.json").write_text(json.dumps(
        {"schema": BASELINE_SCHEMA, "device": {"key": key},
         "backends": {"cuda": {"metrics": {"latency.fp32.fma.cycles": {**entry, "value": 4.0}}}}}))
    t = latencies(tmp_path, key, "cuda", 1980.0, baseline_dir=other)
    assert t.of("fma", 1) == 4.0 and t.sources["fma"] == f"probe baseline {key}.json: latency.fp32.fma.cycles"


# Tesla K20 (the thesis' running example): R[LSU] = 32 per SMX, 13 SMX; Table 4.5's K20 throughput models,
# read in MB/s (= bytes/µs; their saturation, 79.4 GB/s global, is device-wide), converted to bytes/s here.
K20_GLOBAL_TP = (76363.8e6, 1.04, 0.00021342)
K20_SHARED_TP = (823761.8e6, 1.0, 0.000013830)


def test_global_penalty_eq_4_10_by_hand():
    """Eq. 4.10 on the §4.4.4.2 vectorAdd illustration (13 blocks × 256 threads on a K20): two loads and
    one store of 4 B per thread, nGM = 3. By hand: nB·nT_b = 3328 threads, 9984 requests →
    TP = 76363.8·(1.04 − e^(−0.00021342·9984)) = 76363.8·(1.04 − 0.118739) = 70350.6 MB/s;
    gm = 3328/32 × 4 B / 70350.6 MB/s × 3 = 104 × 5.6858e-5 µs × 3 = 0.017740 µs.
    Charging every thread's bytes instead (the pre-fix form) would give 32× that, 0.5677 µs."""
    gm = scheduler.global_penalty_s(3328, 3.0, 12.0, 32, K20_GLOBAL_TP)
    assert gm == pytest.approx(1.7740e-8, rel=1e-3)
    assert scheduler.global_penalty_s(3328, 0.0, 0.0, 32, K20_GLOBAL_TP) == 0.0
    # access_sz is the bytes of one thread's access: v4.f32 loads (16 B) cost 4× per access
    assert scheduler.global_penalty_s(3328, 3.0, 48.0, 32, K20_GLOBAL_TP) == pytest.approx(4 * gm)


def test_shared_penalty_eq_4_11_by_hand():
    """Eq. 4.11, same launch with one shared store and one shared load of 4 B per thread (nShM = 2):
    6656 requests → TP(sm) = 823761.8·(1 − e^(−0.00001383·6656)) = 823761.8·0.087942 = 72443.9 MB/s;
    sm = 3328/(32·13) × 4 B / 72443.9 MB/s × 2 = 8 × 5.5215e-5 µs × 2 = 8.8344e-4 µs."""
    sm = scheduler.shared_penalty_s(3328, 2.0, 8.0, 32, 13, K20_SHARED_TP)
    assert sm == pytest.approx(8.8344e-10, rel=1e-3)
    assert scheduler.shared_penalty_s(3328, 0.0, 0.0, 32, 13, K20_SHARED_TP) == 0.0


def test_predict_sums_eq_4_8_with_the_thesis_penalties():
    """predict() adds exactly d_kernel/clock + l_overhead + Eq. 4.10 + Eq. 4.11 + Eq. 4.12 (no other term),
    with R[LSU] and nSM of the device: on sm_90, 32 LSUs per SM and 132 SMs."""
    text = (Path(__file__).parent / "data" / "models" / "vectorAdd.ptx").read_text()
    g = cfg.build(ptx.parse(text))
    table = LatencyTable({k: 4.0 for k in ("addf", "adds", "mul", "mads", "setp", "mov", "cvt", "and")}, {},
                         600.0, "test")
    cal = scheduler.Calibration((3e-6, 1e-12), (2.4e12, 1.0, 5e-7), (1.3e13, 1.5, 2e-8))
    grid, block = 16384, 256
    p = scheduler.predict(g, table, cal, grid=grid, block=block, regs=16, shared=0, trips=[], n_sm=132,
                          clock_hz=1.98e9, l2_bytes=50 << 20)
    threads = grid * block
    gm = threads / 32 * 4 / (2.4e12 * (1.0 - math.exp(-5e-7 * 3 * threads))) * 3
    assert p.gm_penalty_s == pytest.approx(gm) and p.sm_penalty_s == 0.0
    assert p.launch_s == pytest.approx(3e-6 + 1e-12 * threads)
    assert p.seconds == pytest.approx(p.d_kernel_cycles / 1.98e9 + p.launch_s + p.gm_penalty_s + p.cm_penalty_s)


def test_issue_variant_overlaps_independent_latencies_on_pipelined_units():
    """Two independent global loads then an add that uses both, 256 threads, R[LSU] = 32 (8 batches).
    Thesis (Alg. 6): each load holds the LSU for 315 + 7 cycles, so the second starts at 322 and the add
    at 644. Issue variant: the LSU is busy 8 cycles per load (⌈256/32⌉), the second load issues at 8 and
    is done at 8 + 8 − 1 + 315 = 330; the add (SP: ⌈256/192⌉ = 2 issue cycles, latency 9) ends at
    330 + 2 − 1 + 9 = 340."""
    b = block_of("ld.global.f32 %f3, [%rd1];\n ld.global.f32 %f4, [%rd2];\n add.f32 %f5, %f3, %f4;")
    lat = lat_of({"addf": 9, "ld.global": 315})
    thesis = scheduler.schedule_block(b, lat, K20, 256)
    issue = scheduler.schedule_block(b, lat, {**K20, "INTMAD": 192}, 256, variant="issue")
    assert thesis == pytest.approx(322 + 322 + 9 + 1)
    assert issue == pytest.approx(340)


def test_issue_rates_take_the_measured_throughput_and_name_their_source():
    rates, sources = scheduler.issue_rates({"throughput.fp32.fma.ops_per_clk_sm": 122.1,
                                            "throughput.int32.mad.ops_per_clk_sm": 64.0}, "9.0")
    assert rates["SP"] == 122.1 and sources["SP"] == "measured: throughput.fp32.fma.ops_per_clk_sm"
    assert rates["INTMAD"] == 64.0 and rates["LSU"] == 32 and "table" in sources["LSU"]
    # the identity word: two of the five probed units here, none without the latency suite, all with it
    assert scheduler.rates_origin(sources) == "measured 2 of 5"
    assert scheduler.rates_origin(scheduler.issue_rates({}, "9.0")[1]) == "table"
    every = {name: 100.0 for name in scheduler.RATE_METRICS.values()}
    assert scheduler.rates_origin(scheduler.issue_rates(every, "9.0")[1]) == "measured"
    assert scheduler.issue_resource("mads") == "INTMAD" and scheduler.issue_resource("adds") == "INT"
    with pytest.raises(ValueError, match="unknown scheduling variant"):
        scheduler.schedule_block(block_of("add.f32 %f1, %f0, %f0;"), lat_of({"addf": 4}), K20, 32, variant="x")


def _vector_add():
    text = (Path(__file__).parent / "data" / "models" / "vectorAdd.ptx").read_text()
    table = LatencyTable({k: 4.0 for k in ("addf", "adds", "mul", "mads", "setp", "mov", "cvt", "and")}, {},
                         600.0, "test")
    return cfg.build(ptx.parse(text)), table


def test_hopper_variant_is_the_largest_of_its_three_limits_after_the_fixed_launch_cost():
    """vectorAdd (3 global accesses of 4 bytes per thread) on 4 M threads: the memory stream at the fitted
    throughput (saturating at 2.4 TB/s) is 50.3 MB / 2.4 TB/s ≈ 21 µs, longer than the dispatch slope
    (1e-12 s × 4 M = 4.2 µs) and the execution; the time is l0 + that stream, and the variant says so."""
    g, table = _vector_add()
    cal = scheduler.Calibration((3e-6, 1e-12), (2.4e12, 1.0, 5e-7), (1.3e13, 1.5, 2e-8))
    grid, block = 16384, 256
    threads = grid * block
    p = scheduler.predict(g, table, cal, grid=grid, block=block, regs=16, shared=0, trips=[], n_sm=132,
                          clock_hz=1.98e9, variant="hopper")
    stream = threads * 12 / (2.4e12 * (1.0 - math.exp(-5e-7 * 3 * threads)))
    assert p.parts["memory_s"] == pytest.approx(stream)
    assert p.parts["bound"] == "memory" and p.seconds == pytest.approx(3e-6 + stream)
    assert p.gm_penalty_s == p.sm_penalty_s == p.cm_penalty_s == 0.0  # the thesis' penalties are not charged
    # one warp per SM with a throughput fit that saturates at once: 50 KB stream in 21 ns, execution (one
    # warp's chain of ~600-cycle loads) binds
    quick = scheduler.Calibration((3e-6, 1e-12), (2.4e12, 1.0, 1.0), cal.shared_tp)
    small = scheduler.predict(g, table, quick, grid=132, block=32, regs=16, shared=0, trips=[], n_sm=132,
                              clock_hz=1.98e9, variant="hopper")
    assert small.parts["bound"] == "execution"
    assert small.seconds == pytest.approx(3e-6 + small.d_kernel_cycles / 1.98e9)
    # a dispatch slope 100× steeper makes dispatch the limit
    slow = scheduler.Calibration((3e-6, 1e-10), cal.global_tp, cal.shared_tp)
    d = scheduler.predict(g, table, slow, grid=grid, block=block, regs=16, shared=0, trips=[], n_sm=132,
                          clock_hz=1.98e9, variant="hopper")
    assert d.parts["bound"] == "dispatch" and d.seconds == pytest.approx(3e-6 + 1e-10 * threads)


def test_hopper_wave_takes_the_longer_of_issue_and_one_warps_chain():
    """Per wave: max(issue cycles of all the wave's instructions at the unit rates, one warp's dependent
    chain), and waves add up. With 600-cycle global loads vectorAdd's chain (1239 cycles) is longer than
    issuing 2048 threads (224 cycles): chain-bound; with 5-cycle loads the same wave is issue-bound."""
    g, table = _vector_add()
    cal = scheduler.Calibration((0.0, 0.0), (1e18, 1.0, 1.0), (1e18, 1.0, 1.0))  # no memory, no launch
    rates = scheduler.issue_rates({}, "9.0")[0]
    busy = scheduler.issue_cycles(g, rates, 2048, [])
    executed = sum(len(b.instructions) for b in g.blocks)  # straight-line kernel: every instruction once
    assert busy["ISSUE"] == pytest.approx(executed * 64 / 4)  # 64 warps through 4 dispatch slots
    assert busy["LSU"] == pytest.approx(3 * 2048 / 32)  # 3 global accesses at 32 threads/clk
    issue = max(busy.values())
    fast = LatencyTable(dict(table.cycles), {}, 5.0, "test")
    for tab, bound in ((table, "chain"), (fast, "issue")):
        chain = scheduler.schedule_cfg(g, lambda ins: tab.of(ins.klass, 1), rates, 32, [], "issue")
        assert (chain > issue) == (bound == "chain")  # the premise of each case
        p = scheduler.predict(g, tab, cal, grid=132 * 8 * 2, block=256, regs=16, shared=0, trips=[], n_sm=132,
                              clock_hz=1e9, variant="hopper")
        assert p.waves == 2 and p.d_kernel_cycles == pytest.approx(2 * max(issue, chain))
    # the thesis variant on the same launch is longer: it holds units for whole latencies
    thesis = scheduler.predict(g, table, cal, grid=132 * 8 * 2, block=256, regs=16, shared=0, trips=[], n_sm=132,
                               clock_hz=1e9)
    hopper = scheduler.predict(g, table, cal, grid=132 * 8 * 2, block=256, regs=16, shared=0, trips=[], n_sm=132,
                               clock_hz=1e9, variant="hopper")
    assert thesis.d_kernel_cycles > hopper.d_kernel_cycles


def test_the_net_throughput_takes_the_launch_out_of_every_calibration_copy():
    """Copies timed as ``l0 + bytes / BW`` give back BW at every size once ``l0`` is taken out; a copy whose whole
    time is the launch is left out."""
    l0, bw = 3e-6, 3.2e12
    points = [(2.0 * n, 8.0 * n / (l0 + 8.0 * n / bw)) for n in (1 << 14, 1 << 18, 1 << 22, 1 << 26)]
    net = ptx_calibration.net_throughput_points(points, l0)
    assert [p[0] for p in net] == [p[0] for p in points]
    assert all(tp == pytest.approx(bw, rel=1e-9) for _, tp in net)
    assert all(tp < bw for _, tp in points)  # the thesis' TP holds the launch
    assert ptx_calibration.net_throughput_points([(2.0, 8.0 / l0)], l0) == []


def test_launch_once_is_the_hopper_variant_with_the_launch_paid_once():
    graph = cfg.build(ptx.parse((Path(__file__).parent / "data" / "models" / "vectorAdd.ptx").read_text(), "vectorAdd"))
    table = LatencyTable({k: 4.0 for k in CLASSES}, {}, 600.0, "fixed probe")
    cal = scheduler.Calibration((3e-6, 1e-12), (2.4e12, 1.0, 5e-7), (1.3e13, 1.5, 2e-8), global_tp_net=(3.2e12, 1.0, 5e-7))
    shape = dict(grid=4096, block=256, regs=16, shared=0, trips=[], n_sm=132, clock_hz=1.98e9)
    hopper = scheduler.predict(graph, table, cal, **shape, variant="hopper")
    once = scheduler.predict(graph, table, cal, **shape, variant="launch_once")
    assert once.parts["bound"] == hopper.parts["bound"] == "memory"
    assert once.parts["memory_s"] == pytest.approx(hopper.parts["memory_s"] * 2.4 / 3.2)
    assert once.parts["launch_fixed_s"] == hopper.parts["launch_fixed_s"] == 3e-6
    assert {k: v for k, v in once.parts.items() if k != "memory_s"} == {k: v for k, v in hopper.parts.items() if k != "memory_s"}
    with pytest.raises(ValueError, match="global_tp_net"):  # a calibration that measured no net throughput
        scheduler.predict(graph, table, dataclasses.replace(cal, global_tp_net=None), **shape, variant="launch_once")
