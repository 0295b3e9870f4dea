"""The gate check's plants in every family: each kind parses and is refused when malformed, the family
plants take the size their baseline bands claim, and on the real OpenCL device of this machine each plant
moves its metric by about its size in the bad direction (a planted and an unplanted run of the one test, or
of the one procedure where the test takes tens of seconds on PoCL). The host is shared, so sizes are
PoCL-sized and checks ask for half the planted move."""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import numpy as np

import pytest

from pytest_gpuperf.baselines.cli import entry_band
from pytest_gpuperf.cli import main as gpuperf
from pytest_gpuperf.devices import discover
from pytest_gpuperf.gatecheck import families, plants
from pytest_gpuperf.gatecheck import run as gc
from pytest_gpuperf.probes import launch_overhead
from pytest_gpuperf.schemas.results_doc import MetricRecord, ResultsDocument
from pytest_gpuperf.util import jsonio
from pytest_gpuperf.verdictwords import Gate
from suite_support import baselined_tiny_suite

INV = discover()
HAS_CL = any(d.backend == "opencl" for d in INV.devices)
needs_cl = pytest.mark.skipif(not HAS_CL, reason="no OpenCL device (install pocl-opencl-icd)")
DEV = "opencl:0"
REPO = Path(__file__).resolve().parents[1]
FRACTIONS = ("memory", "compute", "throughput", "launch", "chase", "summation", "power", "tuner", "model")


@pytest.mark.parametrize("kind", FRACTIONS)
def test_every_fraction_kind_parses_and_refuses_bad_sizes(kind):
    assert plants.parse([f"{kind}=0.05"]) == {kind: "0.05"}
    assert plants.fraction((f"{kind}=1.5",), kind) == 1.5 and plants.fraction((), kind) == 0.0
    assert kind in plants.FAMILY
    for bad, says in ((f"{kind}=fast", "takes the added share of work"), (f"{kind}=0", r"must lie in \(0, 10\)"),
                      (f"{kind}=12", r"must lie in \(0, 10\)"), (f"{kind}=nan", r"must lie in \(0, 10\)"),
                      (f"{kind}=", "use KIND=ARG"), (kind, "use KIND=ARG")):
        with pytest.raises(ValueError, match=says):
            plants.parse([bad])


def test_unknown_kinds_and_function_names_are_refused_with_the_list():
    with pytest.raises(ValueError, match=r"KIND one of .*launch \(fraction\).*summation \(fraction\)"):
        plants.parse(["latency=0.1"])
    with pytest.raises(ValueError, match="takes a math function's name"):
        plants.parse(["ulp=sin; rm"])


@needs_cl
def test_a_malformed_plant_stops_the_run_before_any_test(tmp_path):
    o = gc.run_pytest(DEV, ["suites/test_accuracy_sum.py", "--gpuperf-plant", "chase=-1"], tmp_path / "r.json",
                      tmp_path / "r.log", baseline_dir=None, cwd=REPO)
    text = o.log.read_text()
    assert o.exit == 4 and "chase=-1" in text and "(0, 10)" in text, text[-600:]


def test_claimed_size_is_one_and_a_half_bands():
    band = entry_band
    assert families.claimed_size({"value": 100.0, "tolerance": {"rel": 0.02}}, band) == pytest.approx(0.03)
    # the noise term wins when wider: 6 × 1.0 on 100
    assert families.claimed_size({"value": 100.0, "tolerance": {"rel": 0.01, "k": 6, "spread": 1.0}},
                                 band) == pytest.approx(0.09)
    # an additive plant (an error fraction) takes the band itself, not relative to the value
    assert families.claimed_size({"value": 0.087, "tolerance": {"abs": 0.02, "rel": 0.5, "k": 6, "spread": 0.0177}},
                                 band, additive=True) == pytest.approx(0.16)  # 0.1593, rounded up
    assert families.claimed_size({"value": 5.0, "tolerance": {"abs": 0}}, band) == families.MIN_SIZE


def test_claimed_size_is_the_mde_the_verdict_states_where_that_is_wider():
    """A few baseline runs (or a sample test) can make the verdict's stated MDE wider than 1.5 bands: the plant
    then takes the MDE, the change the verdict says it catches, never less."""
    from pytest_gpuperf.baselines import table
    entry = {"value": 666.4, "unit": "cycles", "better": "lower", "tolerance": {"rel": 0.05, "k": 6.0, "spread": 1.37},
             "run_values": [664.19, 666.41, 666.68]}
    mde = table.power("memory.dram.latency.cycles", entry).mde
    assert mde is not None and mde > 0.075  # three runs: the prediction t-test, not the 5 % band, sets it
    size = families.claimed_size(entry, entry_band, mde=mde)
    assert size >= mde and size == pytest.approx(mde, rel=5e-3)
    # the band wins where it is wider; an infinite MDE is not plantable
    assert families.claimed_size({"value": 100.0, "tolerance": {"rel": 0.02}}, entry_band, mde=0.01) == pytest.approx(0.03)
    assert families.claimed_size({"value": 100.0, "tolerance": {"rel": 0.02}}, entry_band, mde=math.inf) > families.MAX_SIZE
    # additive: the MDE × the value, in the metric's units
    assert families.claimed_size({"value": 0.5, "tolerance": {"abs": 0.01}}, entry_band, additive=True,
                                 mde=0.4) == pytest.approx(0.2)
    chosen, _ = families.family_plants(["chase"], False, {"memory.dram.latency.cycles": entry}, entry_band,
                                       power=lambda n, e: table.power(n, e).mde)
    dram = next(p for p in chosen if p.metric == "memory.dram.latency.cycles")
    assert float(dram.arg) >= mde


def test_family_plants_take_the_baseline_bands_and_say_what_they_leave_out():
    entries = {"launch.empty.device_us": {"value": 2.72, "tolerance": {"abs": 0.5}, "test": "suites/test_memory.py::"
                                          "test_launch_overhead"},
               "launch.overhead.intercept_us": {"value": 0.66, "tolerance": {"abs": 25.0}}}
    chosen, skipped = families.family_plants(["launch", "power"], False, entries, entry_band, spec="cuda:0",
                                             compute_units=132)
    by_metric = {p.metric: p for p in chosen}
    assert by_metric["launch.empty.device_us"].arg == "0.276"
    assert by_metric["launch.empty.device_us"].tests == ("suites/test_memory.py::test_launch_overhead[cuda:0]",)
    assert by_metric["power.fma_fp32.joules_per_op"].arg == "0.3"  # no entry: the GPU fallback
    assert by_metric["launch.graph.empty.device_us"].arg == "0.05"  # the graph's launches: no entry, GPU fallback
    # planted in the order the families are named: the quick fixed plants first where a time limit may stop the rest
    named, _ = families.family_plants(["ulp", "power", "launch", "missing"], False, entries, entry_band, spec="cuda:0",
                                      compute_units=132)
    assert [p.kind for p in named] == ["ulp", "power", "launch", "launch", "missing"]
    everyone, _ = families.family_plants(None, False, entries, entry_band, spec="cuda:0", compute_units=132)
    assert [p.kind for p in everyone][-2:] == ["ulp", "missing"]
    # the graph grid's name carries the device's SM count: planted only where the baseline names it
    assert [s["metric"] for s in skipped] == ["launch.graph.grid.132x256.device_us", "launch.overhead.intercept_us"]
    assert "132 compute units" in skipped[0]["why"] and "56.9×" in skipped[1]["why"]
    grid = {"value": 0.5425, "tolerance": {"k": 6.0, "spread": 0.00238},
            "test": "suites/test_memory.py::test_graph_grid_launches"}
    chosen, skipped = families.family_plants(["launch"], False, {**entries, "launch.graph.grid.132x256.device_us": grid},
                                             entry_band, spec="cuda:0", compute_units=132)
    planted = {p.metric: p for p in chosen}["launch.graph.grid.132x256.device_us"]
    assert planted.tests == ("suites/test_memory.py::test_graph_grid_launches[cuda:0]",)
    assert float(planted.arg) == pytest.approx(1.5 * 6.0 * 0.00238 / 0.5425, rel=0.01)
    # a card of another SM count targets its own grid, under the name its baseline gives it
    chosen, skipped = families.family_plants(["launch"], False, {**entries, "launch.graph.grid.114x256.device_us": grid},
                                             entry_band, spec="cuda:0", compute_units=114)
    assert "launch.graph.grid.114x256.device_us" in {p.metric for p in chosen}
    # a device that reports no SM count cannot name the grid: left out with that reason, never guessed
    chosen, skipped = families.family_plants(["launch"], False, {**entries, "launch.graph.grid.132x256.device_us": grid},
                                             entry_band, spec="cuda:0")
    assert not any(p.metric.startswith("launch.graph.grid.") for p in chosen)
    assert any("did not report" in s["why"] for s in skipped if "{units}" in s["metric"])
    # on a CPU device the power family is left out with its reason, the copy stops at 256 MiB
    chosen, skipped = families.family_plants(None, True, {}, entry_band)
    why = {s["metric"]: s["why"] for s in skipped}
    assert set(why) == {"power.fma_fp32.joules_per_op", "launch.graph.empty.device_us",
                        "launch.graph.grid.{units}x256.device_us"}
    assert "power sensor" in why["power.fma_fp32.joules_per_op"] and "CUDA" in why["launch.graph.empty.device_us"]
    assert "CUDA" in why["launch.graph.grid.{units}x256.device_us"]
    assert "memory.copy.bandwidth.1GiB" not in {p.metric for p in chosen}
    assert {p.kind for p in chosen} == set(FRACTIONS) - {"power"} | {"ulp", "missing"}
    fixed = {p.kind: p for p in chosen if p.kind in families.FIXED}
    assert (fixed["ulp"].arg, fixed["ulp"].metric) == ("sin", "accuracy.fp32.sin.max_ulp")
    assert fixed["missing"].metric == "memory.copy.bandwidth.16MiB" and fixed["missing"].size == fixed["missing"].arg
    with pytest.raises(ValueError, match="unknown plant families"):
        families.family_plants(["latency"], True, {}, entry_band)
    curve, none = families.curve_plants(False, {})
    assert sorted({p.metric for p in curve}) == sorted(families.HEADLINES) and none == []
    assert sorted({p.arg for p in curve}) == ["0.01", "0.02", "0.05", "0.1"]
    # a headline the gate records without judging gets no curve, and says why; a CPU device draws none of the graph
    curve, none = families.curve_plants(False, {}, ungated=lambda n, u: "spreads" if n.endswith("intercept_us") else None)
    assert "launch.overhead.intercept_us" not in {p.metric for p in curve}
    assert none == [{"kind": "launch", "metric": "launch.overhead.intercept_us",
                     "why": "no detection curve: recorded, not gated: spreads"}]
    curve, none = families.curve_plants(True, {})
    assert "launch.graph.empty.device_us" not in {p.metric for p in curve}
    assert [n["metric"] for n in none] == ["launch.graph.empty.device_us"] and "CUDA" in none[0]["why"]


def test_detection_counts_families_beside_the_aa_runs():
    doc = {"commit": "b", "aa": [{"run": 1, "regressed": [], "missing": [], "exit": 0, "commit": "b"},
                                 {"run": 2, "regressed": [{"metric": "x"}], "missing": [], "exit": 1, "commit": "b"},
                                 {"run": 3, "regressed": [], "missing": [], "exit": 0, "commit": "a"}],
           "planted": [{"kind": "chase", "metric": "memory.l1.latency.cycles", "size": 0.015, "tries": 3,
                        "detected": 3, "commit": "b"},
                       {"kind": "chase", "metric": "memory.l2.latency.cycles", "size": 0.045, "tries": 3,
                        "detected": 2, "commit": "b"},
                       {"kind": "launch", "metric": "launch.empty.device_us", "size": 0.3, "tries": 3,
                        "detected": 0, "commit": "a"}]}
    det = gc.detection(doc)
    assert det["aa"] == {"runs": 2, "clean": 1, "false_alarm_rate": 0.5, "incomparable": []}
    assert list(det["families"]) == ["chase"]
    assert det["families"]["chase"]["family"] == "cache chase"
    assert (det["families"]["chase"]["tries"], det["families"]["chase"]["detected"]) == (6, 5)


@needs_cl
def test_gatecheck_cli_refuses_an_unknown_family(tmp_path, capsys):
    code = gpuperf(["baseline", "gatecheck", f"--device={DEV}", "--families", "launch,latency", "--aa", "0",
                    "--out", str(tmp_path / "g.json"), "--results-dir", str(tmp_path)])
    err = capsys.readouterr().err
    assert code != 0 and "--families 'launch,latency'" in err and "unknown plant families ['latency']" in err, err
    assert not (tmp_path / "g.json").exists()


# ---- each plant on PoCL: the metric moves by about the planted size --------------------------------------------


def _value(doc: ResultsDocument, name: str) -> float:
    (m,) = [m for m in doc.metrics if m.name == name]
    return float(m.value)


def _pair(tmp_path: Path, tests: tuple[str, ...], plant: str, metric: str,
          update: bool = False) -> tuple[float, float, MetricRecord]:
    """The metric from a run without and one with ``plant`` (the planted run's record too); ``update``: the
    unplanted run writes the test's own baseline, which the planted one is then gated against."""
    runs, bl = tmp_path / "runs", tmp_path / "bl"
    bl.mkdir(exist_ok=True)  # the test's own baselines: never the shipped ones
    extra = ["--gpuperf-update-baselines"] if update else []
    a = gc.run_pytest(DEV, [*tests, *extra], runs / "a.json", runs / "a.log", baseline_dir=str(bl), cwd=REPO)
    b = gc.run_pytest(DEV, [*tests, "--gpuperf-plant", plant], runs / "b.json", runs / "b.log", baseline_dir=str(bl),
                      cwd=REPO)
    assert a.doc and b.doc, (a.log.read_text()[-2000:], b.log.read_text()[-2000:])
    (rec,) = [m for m in b.doc.metrics if m.name == metric]
    return _value(a.doc, metric), _value(b.doc, metric), rec


@needs_cl
def test_summation_plant_scales_the_error_exactly(tmp_path):
    """The zero-sum data set's result is its rounding error, so scaling the sum by 2.5 scales the error by 2.5;
    the gate (baseline: the unplanted run's) reads it as more than its one-order band allows."""
    metric = "accuracy.sum.float.serial.n16.abs_err"
    sel = ("suites/test_accuracy_sum.py", "-k", "test_summation and serial")
    before, after, rec = _pair(tmp_path, sel, "summation=1.5", metric, update=True)
    assert after == pytest.approx(2.5 * before, rel=1e-6) and before > 0
    assert rec.info["planted_slowdown"] == 1.5
    assert rec.verdict in ("regressed", "contended"), rec  # contended: a busy host's run does not gate


@needs_cl
def test_launch_plant_adds_work_to_every_launch(tmp_path):
    """The grid sweep launches a kernel whose first work-item spins for as long as moves the fitted intercept
    to 10x the unplanted sweep's (calibrated on the intercept): the fitted launch overhead (the lower quartile of many launches per point on a CPU device) rises by over half that
    extra time. (PoCL's launch time switches between modes a few µs apart from process to process, so the
    plant is large and the check is on the added time, not a ratio.)"""
    metric = "launch.overhead.intercept_us"
    before, after, rec = _pair(tmp_path, ("suites/test_memory_hierarchy.py", "-k", "test_launch_overhead_vs_grid"),
                               "launch=9", metric)
    assert rec.info["planted_slowdown"] == 9.0 and rec.info["planted_spin_steps"] > 0
    # against the unplanted sweep the planted process fitted moments before (a load spike between two processes
    # moves a separate run's intercept by more than a microsecond on a busy 2-core host), and the separate run
    unplanted = min(before, rec.info["planted_intercept_unplanted_us"])
    assert after - unplanted >= 0.5 * rec.info["planted_extra_us"], (before, after, rec.info)


def test_graph_launch_plant_spreads_a_spin_launch_costlier_than_its_target():
    """A graph launch's plant of 4.4 % of a 0.50 µs launch asks for 22 ns per launch; a spin launch of one step
    costs 73 ns more than an empty one there (entering the loop at all costs several steps), so spinning every
    launch would plant over 3× the claim. The layout spins that share of the launches, evenly spread."""
    launches, target, own = 1000, 0.044 * 0.5, 0.073
    spun = launch_overhead.graph_plant_layout(launches, target, own)
    assert len(spun) == round(launches * target / own) and abs(len(spun) * own / launches - target) < own / launches
    assert min(spun) == 0 and max(spun) < launches
    gaps = sorted(b - a for a, b in zip(sorted(spun), sorted(spun)[1:]))
    assert gaps[-1] - gaps[0] <= 1  # spread, not bunched
    assert len(launch_overhead.graph_plant_layout(launches, 0.2, 0.1)) == launches  # capped at every launch
    assert len(launch_overhead.graph_plant_layout(launches, 1e-6, 0.1)) == 1  # never none
    assert len(launch_overhead.graph_plant_layout(launches, 0.2, 0.0)) == launches


def test_graph_launch_plant_measures_the_cost_of_the_steps_it_uses():
    """The spin's in-graph cost is measured at the steps the plant then uses: a cost far from proportional to its
    steps near zero (here 50 ns to enter the loop, 2 ns a step) is never extrapolated from a longer spin."""
    asked: list[int] = []

    def cost(steps: int) -> float:
        asked.append(steps)
        return 0.050 + 0.002 * steps

    steps, own = launch_overhead.graph_plant_steps(cost, 0.022, start=1)
    assert (steps, asked) == (1, [1]) and own == pytest.approx(0.052)  # one step already costs more than the target: measured once
    asked.clear()
    steps, own = launch_overhead.graph_plant_steps(cost, 0.2, start=2)  # 2 steps cost 54 ns: longer, measured
    assert asked[0] == 2 and len(asked) <= launch_overhead.GRAPH_PLANT_ATTEMPTS
    assert own >= 0.2 and own == pytest.approx(0.050 + 0.002 * steps) and asked[-1] == steps
    assert own < 0.25  # reached by the cost per step, not overshot by a proportional jump from the loop's entry
    steps, own = launch_overhead.graph_plant_steps(lambda s: 0.0, 0.2, start=3)  # never costs anything: gives up
    assert steps == 3 * 4 ** (launch_overhead.GRAPH_PLANT_ATTEMPTS - 1) and own == 0.0


def test_graph_launch_plant_never_spins_past_a_launch_it_cannot_hide_behind():
    """At the largest grids a one-work-item spin runs beside thousands of work-groups: its measured cost is noise
    near zero, and a step in proportion to that noise once grew the spin until a graph of its launches outlived the
    device's watchdog (the H200's 33,792-block grid). The steps stop at ``most`` whatever the costs read."""
    asked: list[int] = []

    def hidden(steps: int) -> float:
        asked.append(steps)
        return 1e-5  # a nanosecond's hundredth: the timer's noise, not the spin
    steps, own = launch_overhead.graph_plant_steps(hidden, 0.7, start=40, most=1400)
    assert steps == 1400 and max(asked) == 1400 and len(asked) <= launch_overhead.GRAPH_PLANT_ATTEMPTS
    asked.clear()
    steps, _ = launch_overhead.graph_plant_steps(hidden, 0.7, start=4000, most=1400)  # a start past it: capped too
    assert asked == [1400] and steps == 1400
    # uncapped, the same noise asks for a spin tens of thousands of times the start: what the cap prevents
    asked.clear()
    launch_overhead.graph_plant_steps(hidden, 0.7, start=40)
    assert max(asked) > 1000 * 40


def test_throughput_and_launch_plants_on_the_probe_figures(cl_device):
    """In one process, unplanted and planted measurements side by side (the host's load moves both): the
    throughput chain credited with a quarter of its iterations reads well under half the rate, and the host
    issuing 3x the launches it counts reads well over the unplanted time per launch."""
    from pytest_gpuperf.helpers import Measurer
    from pytest_gpuperf.probes import launch_overhead, ops, throughput
    from pytest_gpuperf.timing.measure import MeasureConfig

    dev = cl_device
    meas = Measurer(dev, MeasureConfig(min_repeats=5, max_repeats=15, target_rel_spread=0.05))
    ((ck, kernel),), _ = throughput.build(dev, ops.op("fp32.fma"), (8,))
    rates = [throughput.measure(dev, meas, ck, kernel, dev.info.clock_mhz, 5e-3, plant=p).ops_per_clk_cu.median
             for p in (0.0, 3.0, 0.0, 0.0)]
    assert rates[1] < max(rates[0], *rates[2:]) / 2.0, rates  # a load spike slows one unplanted run, not three
    empty = dev.compile(launch_overhead.empty_source(dev.info.dialect), launch_overhead.EMPTY_NAME)
    host = [launch_overhead.host_launch_us(dev, empty, [np.int32(0)], 500, 5, plant=p).min
            for p in (0.0, 3.0, 0.0, 0.0)]
    assert host[1] > 2.0 * min(host[0], *host[2:]), host


def test_chase_plant_lengthens_every_chase(cl_device):
    """The event-timed chase at one footprint: its long section takes twice the credited loads more, so the
    cycles per load read about 3x (asked: over 1.5x, the quickest of three planted chases against the quickest of
    three unplanted ones interleaved with them: a shared runner's load spike lengthens single chases)."""
    from pytest_gpuperf.helpers import Measurer
    from pytest_gpuperf.probes import hierarchy, memory
    from pytest_gpuperf.timing.measure import MeasureConfig

    dev = cl_device
    p = hierarchy.probe(dev, Measurer(dev, MeasureConfig(min_repeats=5, max_repeats=15, target_rel_spread=0.05)))
    plants = (0.0, 2.0, 0.0, 2.0, 0.0, 2.0)
    lat = [float(np.median(memory.chase_events(dev, p.meas, p.kernels["gp_chase"], 16 << 10, 128, 1 << 30,
                                               p.clock, plant=f))) for f in plants]
    # interleaved, each side's quickest: a load spike only lengthens a chase, so it cannot fake the ratio
    planted = min(v for f, v in zip(plants, lat) if f)
    unplanted = min(v for f, v in zip(plants, lat) if not f)
    assert planted > 1.5 * unplanted, lat
    assert memory.planted_long(256, 0.0) == 512 and memory.planted_long(256, 0.05) == 525


def test_tuner_plant_makes_the_thesis_tuner_pick_a_slower_configuration(cl_device):
    """The thesis tuner on one kernel's space, honest and planted on the same timings: the planted pick is
    the fastest timed configuration over 1 + F slower than the honest one, or the slowest timed one."""
    from pytest_gpuperf.tuning import strategies
    from pytest_gpuperf.tuning.kernels import BENCHMARKS
    from pytest_gpuperf.tuning.tuner import context

    bench = next(b for b in BENCHMARKS if b.name == "reduce")
    ctx = context(cl_device, bench, seed=11)
    honest = strategies.dao(ctx)
    ctx.plant = 0.5
    planted = strategies.dao(ctx)
    t = {c: p.time_s for c, p in ctx.ev.points.items()}
    assert len(t) > 1 and planted.best != honest.best, t
    slower = [x for x in t.values() if x > 1.5 * t[honest.best]]
    assert t[planted.best] == (min(slower) if slower else max(t.values())), (t, planted.best, honest.best)
    assert planted.ledger.visited == honest.ledger.visited  # the plant adds no evaluation
    # where the pick landed among the space's steps: its slowdown, and the slowest configuration below it
    gap = ctx.planted
    assert gap["pick"] == planted.best.label()
    assert gap["pick_slowdown"] == pytest.approx(t[planted.best] / t[honest.best] - 1, abs=1e-5)
    below = [x / t[honest.best] - 1 for c, x in t.items()
             if c not in (honest.best, planted.best) and t[honest.best] <= x < t[planted.best]]
    assert gap["next_below"] == pytest.approx(max(below, default=0.0), abs=1e-5)
    assert gap["next_below"] < gap["pick_slowdown"]


def test_a_tuner_plant_beyond_its_claim_names_the_gap_in_the_space():
    """The H100 check at a7f9144: the space of the reduce kernel has no configuration between 2.1 % and 10 % over the
    thesis tuner's pick, so its plant moved the quality 9.0 % against a 4.56 % claim. The detection summary keeps the
    move beyond the claim and, beside it, the space's steps around the planted pick, summed over appended calls."""
    gap = {"pick": "64", "pick_slowdown": 0.09964, "next_below": 0.02087}
    tuner = {"kind": "tuner", "arg": "0.0545", "metric": "tuning.reduce.dao.quality", "size": 0.0456, "tries": 3,
             "detected": 3, "verdicts": [Gate.REGRESSED] * 3, "realized": [0.09, 0.09, 0.09], "gaps": [gap] * 3,
             "commit": "c"}
    old = {**tuner, "tries": 1, "detected": 1, "verdicts": [Gate.REGRESSED], "realized": [0.09], "gaps": [gap]}
    new = {**tuner, "tries": 2, "detected": 2, "verdicts": [Gate.REGRESSED] * 2, "realized": [0.09, 0.09]}
    new.pop("gaps")  # a later call whose results carried no gap keeps the earlier tries'
    (summed,) = gc._summed([old], "c", [new], "c")
    assert summed["gaps"] == [gap, None, None] and summed["tries"] == 3
    doc = {"commit": "c", "aa": [], "planted": [tuner]}
    (row,) = gc.detection(doc)["families"]["tuner"]["metrics"]
    assert row["beyond_claim"] == 0.09 and row["gap"] == gap
    assert gc.verdict(doc)[0]  # caught every try: a move beyond the claim is reported, not a failure
    no_gap = {**tuner, "gaps": None}
    (row,) = gc.detection({**doc, "planted": [no_gap]})["families"]["tuner"]["metrics"]
    assert "gap" not in row


def test_model_plant_runs_more_groups_than_it_credits(cl_device):
    """Dao's two samples of the corpus' copy kernel (the first groups of the run, at 2 and 3 waves): under the
    plant the second covers (1 + F) × the extra groups over the first — read back from what the kernel wrote —
    while its plan, what the model divides by, is unchanged. (Whether the prediction then grows is the
    sampled model's own noise on PoCL, up to 5x between runs on a loaded host: the H200's gate check
    measures it.)"""
    from pytest_gpuperf.helpers import Measurer
    from pytest_gpuperf.corpora.corpus import by_name
    from pytest_gpuperf.studies.fixtures import SampledKernel
    from pytest_gpuperf.studies.sampled.sampling import planted_p2, saturation_point
    from pytest_gpuperf.timing.measure import MeasureConfig

    k, local = by_name("copy"), 64
    kern = cl_device.compile(k.source(cl_device.info.backend), k.name)
    groups = 40 * saturation_point(cl_device.info, kern.attributes, local).wave
    meas = Measurer(cl_device, MeasureConfig(min_repeats=3, max_repeats=3, warmup=1))
    for plant in (0.0, 1.0):
        c = cl_device.to_device(np.zeros(groups * local, np.float32))
        args = [cl_device.to_device(np.ones(groups * local, np.float32)), c, c, np.int32(groups * local)]
        run = SampledKernel(cl_device, meas, plant=plant)(kern, local, args, groups, cold=False, full=False)
        written = int(np.count_nonzero(cl_device.to_host(c, np.float32)))
        plan = run.plan
        assert written == planted_p2(plan, plant) * local
        assert written == (plan.p2 + round(plant * (plan.p2 - plan.p1))) * local and plan.p2 < groups


def test_power_plant_is_gpu_only_its_launch_does_uncredited_work():
    """The power plant needs a power sensor (no run on PoCL); what it changes is the load's size per credited
    flop."""
    from pytest_gpuperf.power import fma_load

    assert fma_load.planted_threads(0.0) == fma_load.THREADS
    assert fma_load.planted_threads(0.3) == pytest.approx(1.3 * fma_load.THREADS, rel=1e-3)
    assert fma_load.planted_threads(0.3) % fma_load.LOCAL == 0
    if not any(d.backend == "cuda" for d in INV.devices):
        pytest.skip("power plant's run: needs a GPU with NVML (energy per op); this machine has only PoCL")




@needs_cl
def test_gatecheck_writes_curves_not_planted_targets_and_the_detection_summary(tmp_path):
    o, bl = baselined_tiny_suite(tmp_path, DEV, "exact")
    tests = ("suites/test_tiny.py",)
    plant = gc.Plant("memory", "0.5", "tiny.moved", tests)
    curve = [gc.Plant("memory", f"{s:g}", "tiny.moved", tests) for s in (0.01, 0.1)]
    skipped = [{"kind": "power", "metric": "power.fma_fp32.joules_per_op", "why": "no sensor"}]
    doc = gc.gatecheck(device=DEV, out=tmp_path / "g.json", aa=1, plant_list=[plant], tries=1, baseline_dir=str(bl),
                       results_dir=tmp_path / "runs", commit="c1", append=False, fresh_first=False, cwd=tmp_path,
                       echo=lambda line: None, curve_list=curve, not_planted=skipped)
    assert json.loads((tmp_path / "g.json").read_text()) == doc
    assert [(c["size"], c["tries"], len(c["verdicts"])) for c in doc["curves"]] == [(0.01, 1, 1), (0.1, 1, 1)]
    small, big = doc["curves"]
    assert small["verdicts"][0] in ("pass", "contended") and small["detected"] == 0, small
    assert big["verdicts"][0] in ("regressed", "contended"), big
    assert doc["not_planted"] == skipped
    det = doc["detection"]
    assert det["aa"]["runs"] == 1 and det["families"]["memory"]["tries"] == 1  # curves are not counted
    assert det["families"]["memory"]["detected"] == doc["planted"][0]["detected"]
    # a curve point that is missed never fails the check; the family plant decides
    passed, problems = gc.verdict(doc)
    assert passed == (doc["planted"][0]["detected"] == 1 and det["aa"]["clean"] == 1), problems
    # appending sums curve tries per size and commit, like planted ones; new run files never replace old ones
    doc2 = gc.gatecheck(device=DEV, out=tmp_path / "g.json", aa=0, plant_list=[], tries=1, baseline_dir=str(bl),
                        results_dir=tmp_path / "runs", commit="c1", append=True, fresh_first=False, cwd=tmp_path,
                        echo=lambda line: None, curve_list=curve[:1])
    assert [(c["size"], c["tries"]) for c in doc2["curves"]] == [(0.01, 2), (0.1, 1)]
    assert len({r for c in doc2["curves"] for r in c["runs"]} | set(doc2["planted"][0]["runs"])) == 4
    assert doc2["not_planted"] == skipped  # kept when the later call planted no family
    # a later call with left-out targets of its own adds them: the earlier ones stay
    more = [{"kind": "launch", "metric": "launch.empty.device_us", "why": "informational"}]
    doc3 = gc.gatecheck(device=DEV, out=tmp_path / "g.json", aa=0, plant_list=[], tries=1, baseline_dir=str(bl),
                        results_dir=tmp_path / "runs", commit="c1", append=True, fresh_first=False, cwd=tmp_path,
                        echo=lambda line: None, not_planted=more + skipped)
    assert doc3["not_planted"] == skipped + more


def test_a_family_whose_target_the_gate_records_without_judging_is_not_planted_and_says_why():
    """The sampled model's mean error is informational (its spread between machines): the model family's
    plant would test nothing, so it is listed as not planted with the catalog's reason."""
    from pytest_gpuperf.baselines.cli import entry_band, informational_why

    entry = {"value": 0.05, "unit": "ratio", "better": "lower", "tolerance": {"abs": 0.02, "rel": 0.5}}
    chosen, skipped = families.family_plants(["model", "tuner"], False, {"model.sampled.mean_error": entry},
                                             entry_band, ungated=informational_why)
    assert [p.kind for p in chosen] == ["tuner"]
    (why,) = [s["why"] for s in skipped if s["kind"] == "model"]
    assert why.startswith("recorded, not gated: ") and "σ/|mean|" in why
    assert informational_why("tuning.reduce.dao.quality", "ratio") is None


def test_a_missed_plant_says_how_far_it_moved_the_metric():
    """The saved H200 gate check: a DRAM-chase plant of the claimed 7.99 % moved the level latency only +5.9–7.1 %
    against the baseline (the machine reads below it), and a 1 MiB copy plant moved the launch-bound copy a few
    percent: the check fails and says the plant under-delivered; a caught plant carries its reading too."""
    folder = REPO / "results" / "nvidia-h200" / "gatecheck-e003155"

    def outcome(tag: str) -> gc.RunOutcome:
        doc = ResultsDocument.load(folder / f"{tag}.json.xz")
        return gc.RunOutcome(exit=1, doc=doc, wall_s=0.0, log=folder / f"{tag}.log.gz", results=folder / f"{tag}.json.xz")

    dram = gc.Plant("chase", "0.0799", "memory.dram.latency.cycles", ())
    moved = [gc.realized(dram, outcome(f"plant-chase-{i}")) for i in (7, 8, 9)]
    assert all(0.05 < m < 0.0799 for m in moved), moved
    copy = gc.Plant("memory", "0.0728", "memory.copy.bandwidth.1MiB", ())
    assert gc.realized(copy, outcome("plant-memory-2")) > 0.06  # caught: bandwidth fell 6.5 % (higher is better)
    doc = {"aa": [], "planted": [{"kind": "chase", "arg": "0.0799", "metric": dram.metric, "size": 0.0799, "tries": 3,
                                  "detected": 0, "verdicts": ["pass"] * 3, "realized": moved}]}
    passed, problems = gc.verdict(doc)
    assert not passed and "under-delivered" in problems[0] and f"{moved[0]:+.2%}" in problems[0], problems
    doc["planted"][0]["realized"] = [0.09] * 3  # moved past its claim and still passed: the gate's miss, said plainly
    passed, problems = gc.verdict(doc)
    assert not passed and "under-delivered" not in problems[0], problems


def test_a_catch_far_beyond_its_claim_says_it_does_not_show_the_claim():
    """The saved H200 gate check at 724a9eb: the graph launch's plant, sized to 5.9 %, moved the launch 27 %, and the
    tuner's pick moved by a whole configuration (11.9 % against 5.8 %); both were caught, yet neither shows its
    claim, and the detection summary says so. The copies, chases and FMA chains landed near their claims."""
    doc = jsonio.read_json(REPO / "results" / "nvidia-h200" / "gatecheck-724a9eb" / "gatecheck.json")
    det = gc.detection(doc)
    over = {m["metric"]: m["beyond_claim"] for f in det["families"].values() for m in f["metrics"] if "beyond_claim" in m}
    assert set(over) == {"launch.graph.empty.device_us", "tuning.reduce.dao.quality"}, over
    assert 0.25 < over["launch.graph.empty.device_us"] < 0.3
    assert all(f["detected"] == f["tries"] for f in det["families"].values())
    one = {"kind": "chase", "metric": "m", "size": 0.02, "tries": 3, "verdicts": [Gate.REGRESSED] * 3,
           "realized": [0.021, 0.05, 0.06]}
    assert gc.beyond_claim(one) == 0.05
    assert gc.beyond_claim({**one, "verdicts": [Gate.REGRESSED, "pass", "pass"]}) is None  # only caught tries count
    assert gc.beyond_claim({**one, "kind": "model"}) is None


def test_an_additive_plants_relative_move_is_not_set_beside_its_claim():
    """A sampled-model plant adds its size to an error fraction: its relative move says nothing about delivery,
    so a miss is not called under-delivered; a summation plant scales its metric and is judged on its move."""
    assert {t.kind for t in families.TARGETS if t.additive} == {"model"}

    def problems(kind: str) -> list[str]:
        doc = {"aa": [], "planted": [{"kind": kind, "arg": "0.2", "metric": "m", "size": 0.2, "tries": 1,
                                      "detected": 0, "verdicts": ["pass"], "realized": [0.05]}]}
        return gc.verdict(doc)[1]

    assert "under-delivered" not in problems("model")[0]
    assert "under-delivered" in problems("summation")[0]


def test_plants_are_sized_from_the_baseline_the_runs_use_where_no_baselines_folder_exists(tmp_path, monkeypatch):
    """A gate check run in a folder with no ``baselines/`` sizes its plants from the shipped baseline the runs
    are gated against (reviewed, plus a CPU family's entries), not from an empty baseline."""
    from pytest_gpuperf.baselines import lookup
    from pytest_gpuperf.baselines.cli import gated_entries
    from pytest_gpuperf.devices import discover, resolve

    found = discover()
    if not found:
        pytest.skip("no OpenCL or CUDA device: install pocl-opencl-icd")
    (info,) = resolve("0", found)[:1]
    monkeypatch.chdir(tmp_path)
    src = lookup.resolve(tmp_path / "baselines", info.key, info.backend, info.family_key)
    if src.origin == "none":
        pytest.skip(f"{info.key}: neither a reviewed baseline nor a family file ships for this device")
    entries = gated_entries(None, info)
    assert entries and entries == src.file.metrics(info.backend)
    chosen, _ = families.family_plants(None, info.is_cpu, entries, entry_band, spec=info.spec)
    assert any(p.tests and "::" in p.tests[0] for p in chosen), "no plant took its test from a baseline entry"


def test_a_planted_run_that_outlives_its_watchdog_is_stopped_and_named(tmp_path):
    """A plant that makes the device's work outlive the session's watchdog leaves a process that cannot exit while
    that work runs (seen on an H200: a graph of over-long spin launches). The gate check stops such a run after
    10× its unplanted run (never sooner than two minutes): here a test that sleeps past a 3 s limit."""
    assert gc.plant_timeout(None) == gc.RUN_TIMEOUT_S  # a missing plant has no unplanted run to time
    assert gc.plant_timeout(2.0) == gc.PLANT_TIMEOUT_FLOOR_S and gc.plant_timeout(30.0) == 300.0
    (tmp_path / "test_sleeps.py").write_text("import time\n\ndef test_sleeps():\n    time.sleep(120)\n")
    started = time.monotonic()
    o = gc.run_pytest(DEV, [str(tmp_path / "test_sleeps.py")], tmp_path / "r.json", tmp_path / "r.log",
                      baseline_dir=None, cwd=tmp_path, timeout_s=3)
    assert o.exit == gc.TIMED_OUT and time.monotonic() - started < 60


def test_a_plant_the_gate_did_not_judge_says_so_and_is_not_called_under_delivered():
    """The saved H100 gate check at fa43429: the 16 MiB copy's plant read ``incomparable`` in all three tries (the
    baseline's entry was measured another way) and the graph launch's ``new`` (no entry): the gate never judged them,
    whatever they moved, and the check says that, not that the plants under-delivered."""
    doc = jsonio.read_json(REPO / "results" / "nvidia-h100-80gb-hbm3" / "gatecheck-fa43429" / "gatecheck.json")
    passed, problems = gc.verdict(doc)
    copy = next(line for line in problems if "memory.copy.bandwidth.16MiB" in line)
    assert "3 tries read incomparable, not judged against a band" in copy and "re-make it" in copy, copy
    assert "under-delivered" not in copy, copy
    launch = next(line for line in problems if "launch.graph.empty.device_us" in line)
    assert "6 tries read new" in launch and "no entry" in launch, launch
    assert not passed
