"""The derived GPU figures measured again from their baseline runs pooled with every saved A/A run, proved on the
saved values (``scripts/derived_bands.py``).

For every entry of the shipped H200 and H100 baselines the script changed: a gated one holds at least five runs
and a band of k × σ between machines, no saved A/A run reads ``regressed`` against it, and a run whose value moved
by the entry's stated MDE in its bad direction does; an informational one reads ``ungated`` with its measured
spread. Over every derived entry (changed or not) no saved A/A run reads ``regressed``, and the script finds the
shipped files to be what it computes."""

from __future__ import annotations

import copy
import json
import math
import statistics

import pytest

from pytest_gpuperf.baselines import baseline_file, catalog, detection, noise
from pytest_gpuperf.baselines.detection import LOOSE
from pytest_gpuperf.baselines.table import power
from pytest_gpuperf.baselines.verdicts import compare
from pytest_gpuperf.paths import REVIEWED_BASELINES
from suite_support import load_script



aa_bands = load_script("aa_bands")
derived_bands = load_script("derived_bands")
# one xdist worker runs this module and the others of its group (test_aa_band_plants.py, test_derived_bands.py,
# test_derived_informational.py; scripts/run_tests.sh: --dist loadgroup): the saved A/A runs and shipped baselines
# they read are parsed once, not once in each worker
pytestmark = pytest.mark.xdist_group("saved-aa-runs")
_runs = aa_bands.aa_runs  # read once per process (aa_bands caches them)


def _pooled(name: str, entry: dict) -> bool:
    band_from = (entry.get("provenance") or {}).get(catalog.BAND_FROM, {})
    return band_from.get("script") == derived_bands.SCRIPT and name in band_from["baseline"]


@pytest.fixture(scope="module", params=aa_bands.KEYS)
def device(request):
    """(key, the section's metrics, the entries the script changed by name, the A/A runs of the key's cards)."""
    metrics = baseline_file.load(REVIEWED_BASELINES, request.param).data["backends"]["cuda"]["metrics"]
    pooled = {n: e for n, e in metrics.items() if _pooled(n, e)}
    return request.param, metrics, pooled, _runs(request.param, "cuda")


def _judge(name: str, entry: dict, value: float):
    return compare(value, entry["better"], entry, name=name, unit=entry["unit"], identity=entry.get("identity"))


def test_hundreds_of_derived_entries_per_card_gate_from_pooled_runs_within_25_percent(device):
    key, metrics, pooled, runs = device
    gated = {n: e for n, e in pooled.items() if catalog.measured_informational(n, e) is None}
    assert len(gated) > 600 and len({r.machine for r in runs}) >= 4, (key, len(gated))
    # a count on a grid whose band is half a step catches any move of one step: the tightest gate it allows (MDE 0)
    mdes = {n: derived_bands.mde(power(n, e)) for n, e in gated.items()}
    # none over 25 %: a count of evaluations whose runs stay within half a configuration of the kernel's space gates
    # at half a step; a wider one was declared informational
    wide = {n: gated[n]["tolerance"] for n, m in mdes.items() if m is None or m > LOOSE}
    assert wide == {}, wide
    stepped = {n: e["tolerance"] for n, e in gated.items() if "step" in e["tolerance"]}
    assert len(stepped) > 100 and all(math.isclose(t["step"], derived_bands.grid_step(n, gated[n]["unit"], metrics),
                                                   rel_tol=1e-6) and math.isclose(t["abs"], t["step"] / 2, rel_tol=1e-6)
                                      for n, t in stepped.items()), stepped
    assert sum(m <= derived_bands.TARGET for m in mdes.values()) > 0.6 * len(mdes)
    exact = 0
    for name, entry in gated.items():
        runs_of = noise.run_values(entry)
        assert len(runs_of) >= derived_bands.MIN_POOLED, name
        tol = entry["tolerance"]
        if catalog.measured_band(name, entry).startswith("identical in all "):  # deterministic on every machine
            exact += 1
            assert max(runs_of) - min(runs_of) <= derived_bands.EXACT * abs(statistics.median(runs_of)), name
            assert tol in ({"rel": derived_bands.TARGET}, {"abs": tol.get("abs"), "step": tol.get("step")}), (name, tol)
            continue
        assert catalog.measured_band(name, entry).startswith("between machines: "), name
        assert tol["k"] == 6.0 and max(tol["k"] * tol["spread"], tol.get("abs", 0.0)) > 0, (name, tol)
        # never narrower than the runs' spread: k × the larger of their standard deviation and their robust σ
        assert tol["spread"] >= 0.999 * derived_bands.statistics.stdev(runs_of), name
    assert exact > 50, exact  # rounding errors, backward errors, classifier votes, evaluation counts


def test_saved_a_a_runs_read_no_regression_and_mde_plants_regress(device):
    key, _, pooled, runs = device
    false_alarms, missed, judged = [], [], 0
    for name, entry in sorted(pooled.items()):
        if catalog.measured_informational(name, entry) is not None:
            continue
        for reading in aa_bands.readings(name, entry, runs):
            judged += 1
            if _judge(name, entry, reading.value).verdict == "regressed":
                false_alarms.append(f"{name} {reading.run.label} {reading.delta:+.2%}")
        det = power(name, entry)
        sign = -1.0 if entry["better"] == "higher" else 1.0
        # a point of a grid: one step in the bad direction; else the MDE
        planted = (float(entry["value"]) + sign * det.step if det.step is not None
                   else float(entry["value"]) * (1.0 + sign * det.mde * 1.001))
        if _judge(name, entry, planted).verdict != "regressed":
            missed.append(f"{name} ({det.phrase()})")
    assert judged > 4000, judged
    assert false_alarms == [] and missed == [], (false_alarms[:10], missed[:10])


def test_the_ones_too_noisy_between_machines_read_ungated_with_their_measured_spread(device):
    _, metrics, pooled, _ = device
    declared = {n: e for n, e in pooled.items() if catalog.measured_informational(n, e) is not None}
    # some, and few: a pooling or held-out check that declared wholesale would show here. Each declared entry
    # below is proved to carry its measured spread between machines; together they stay under 6 % of the card's
    # entries (the power draws, host-submitted launches, DRAM-range chases, small copies and the tuner figures
    # that jump between machines are what the shipped baselines declare)
    assert 10 < len(declared) <= 0.06 * len(metrics), (len(declared), len(metrics))
    for name, entry in declared.items():
        c = _judge(name, entry, float(entry["value"]) * 10)
        assert c.verdict == "ungated" and c.reason.startswith("informational: over "), (name, c.reason)
        assert "σ/|median|" in c.reason and derived_bands.SCRIPT in c.reason
        # pooled from at least MIN_POOLED runs; one its own runs show too loose to keep, from at least MIN_DECLARED
        own = "its baseline was made from" in c.reason
        assert len(noise.run_values(entry)) >= (derived_bands.MIN_DECLARED if own else derived_bands.MIN_POOLED)


def test_no_saved_a_a_run_reads_a_derived_regression(device):
    """Over every derived entry the gate judges, changed or not: the A/A check stays clean."""
    _, metrics, _, runs = device
    alarms = []
    for name, entry in sorted(metrics.items()):
        if not name.startswith(derived_bands.DERIVED) or entry.get("better") not in ("lower", "higher", "exact"):
            continue
        for reading in aa_bands.readings(name, entry, runs):
            if _judge(name, entry, reading.value).verdict == "regressed":
                alarms.append(f"{name} {reading.run.label} {reading.delta:+.2%}")
    assert alarms == [], alarms[:10]


def test_the_catalog_keeps_a_measured_band_and_the_script_finds_the_shipped_files(device):
    """``gpuperf baseline migrate --catalog-bands`` does not put the row's fixed band back on a measured entry,
    and the script recomputes exactly what the files hold (its check mode would exit 0)."""
    key, metrics, pooled, runs = device
    name, entry = next((n, e) for n, e in sorted(pooled.items()) if n.startswith(derived_bands.DERIVED))
    assert catalog.baseline_band(name, False, metrics) is None
    restored = derived_bands.original(name, entry)
    assert "band_from" not in restored.get("provenance", {}) and len(noise.run_values(restored)) < 5
    assert catalog.baseline_band(name, False, {**metrics, name: restored}) is not None or \
        catalog.family(name) is None
    again = copy.deepcopy(metrics)
    derived_bands.mend_section(key, again, runs)
    assert [n for n in metrics if again[n] != metrics[n]] == []
    # the pooled entries share one provenance per provenance they had: the file keeps one line per update, not one
    # per entry (the H200's pooled entries come from seven updates: its first baselines, the mixed-add study's, the
    # graph launch's, the graph grids' and copies' own runs, the launch-once PTX model's and the refinement's re-made
    # entries, whose speedups are pooled entry by entry)
    had = {json.dumps(derived_bands.original(n, e).get("provenance"), sort_keys=True) for n, e in pooled.items()}
    assert len({json.dumps(p, sort_keys=True) for p in _distinct(e["provenance"] for e in pooled.values())}) \
        == len(had) <= 7


def _distinct(provenances):
    """One of each provenance object: the pooled entries hold one large provenance, as one object or as shallow
    copies of one (its keys over the same values), so it is encoded once, not once per entry (seconds)."""
    return {tuple((k, id(v)) for k, v in p.items()): p for p in provenances}.values()


def test_hardware_figures_pool_towards_five_percent_and_noisy_power_is_declared(device):
    """Hardware figures looser than 5 % (or failed by an unchanged run) are pooled too: each pooled one gates from its
    runs on several machines, and one whose machines spread too far for a 25 % gate (power draws) reads ungated with
    that spread as its reason."""
    key, _, pooled, _ = device
    hardware = {n: e for n, e in pooled.items() if detection.hardware(n)}
    assert hardware, key
    for name, entry in hardware.items():
        assert derived_bands.target(name) == derived_bands.HARDWARE_TARGET
        assert catalog.measured_band(name, entry).startswith("between machines: "), name
    declared = {n: catalog.measured_informational(n, e) for n, e in hardware.items()}
    declared = {n: why for n, why in declared.items() if why is not None}
    assert any(n.startswith("power.") for n in declared), declared
    # declared from the A/A runs of other machines, or from the runs the entry itself was made from where those
    # already spread beyond the target (the H100's re-identified launches and copies, made from two machines' runs)
    assert all(("between machines" in why or "its baseline was made from" in why) and derived_bands.SCRIPT in why
               for why in declared.values()), declared
    assert derived_bands.target("memory.global.latency_model.r2") is None  # a fit's goodness is no hardware figure


def test_a_hardware_band_narrowed_below_five_percent_reaches_its_target_and_holds_for_a_machine_left_out(device):
    """A hardware figure that gated within 5 % but looser than its own target (a device-timed figure's 2 %) is pooled
    only where that reaches the target and each machine left out passes the band the others' runs set; the L2 chase,
    whose machines spread too far for 2 % (H200s read 282–290 cycles), keeps its band."""
    key, metrics, pooled, runs = device
    narrowed = []
    for name, entry in sorted(pooled.items()):
        if not detection.hardware(name) or catalog.measured_informational(name, entry) is not None:
            continue
        was = derived_bands.original(name, entry)
        if power(name, was).mde > derived_bands.HARDWARE_TARGET or derived_bands.own_target(name) is None \
                or "read regressed against the band it had" in catalog.measured_band(name, entry):
            continue  # an entry unchanged runs failed is pooled for that, whatever its MDE
        narrowed.append(name)
        assert power(name, entry).mde <= derived_bands.own_target(name), name
        base = [float(v) for v in (was.get("run_values") or [was["value"]])]
        assert derived_bands.holds_out(name, was, base, aa_bands.readings(name, was, runs), metrics) == "", name
    assert narrowed, key  # the H200's mixed-add ratio, the H100's 256 MiB copy
    l2 = "memory.l2.latency.cycles"
    if key == "nvidia-h100-80gb-hbm3":  # its machines read 282–287 cycles (σ 1.2 %): no 5 % gate holds, so declared
        why = catalog.measured_informational(l2, metrics[l2])
        assert why is not None and "wider than the 5% a hardware figure gates within" in why, why
        return
    assert not _pooled(l2, metrics[l2]) and power(l2, metrics[l2]).mde > derived_bands.own_target(l2)
    if key == "nvidia-h200":  # pooled over every machine it stays short of 2 %: two machines read 282 cycles, most 286–288
        left = derived_bands.pool(key, l2, metrics[l2], runs, metrics)
        assert left.mended is None and "not tighter than" in left.why, left.why
        assert derived_bands.own_target(l2) < power(l2, metrics[l2]).mde <= left.after, left.after


def test_a_derived_figure_that_a_machine_left_out_fails_is_declared_with_what_that_machine_read(device):
    """``scripts/machine_holdout.py``: pooled from every machine but one, the bands of the declared entries fail
    that machine's unchanged run — a jump between machines, not a spread — so each reads ungated with what the
    held-out machine read; pooling again keeps the declaration."""
    key, metrics, pooled, runs = device
    declared = derived_bands.held_out_causes(metrics)
    assert declared and all(n.startswith(derived_bands.DERIVED) for n in declared), declared
    for name, what in declared.items():
        c = _judge(name, metrics[name], float(metrics[name]["value"]) * 10)
        assert c.verdict == "ungated" and "one machine left out fails" in c.reason and what in c.reason, c.reason
    # the cause, proved for the machine named most often: pooled without it, its run reads regressed again
    machine = max({w.split(",")[0].removeprefix("without ") for w in declared.values()},
                  key=lambda m: sum(w.startswith(f"without {m},") for w in declared.values()))
    names = [n for n, w in declared.items() if w.startswith(f"without {machine},")]
    without = copy.deepcopy(metrics)
    derived_bands.mend_section(key, without, [r for r in runs if r.machine != machine], held_out={})
    for name in names:
        mine = aa_bands.readings(name, without[name], [r for r in runs if r.machine == machine])
        assert any(_judge(name, without[name], r.value).verdict == "regressed" for r in mine), (name, machine)


def test_an_a_a_run_speaks_for_the_section_of_its_backend_only(tmp_path):
    """A CUDA and an OpenCL run of one card record the same metric names from the same tests, so a saved A/A run
    pools only into the baseline section of the backend it ran on."""
    name, test = "memory.l2.latency.cycles", "suites/test_memory_hierarchy.py::test_pointer_chase"
    for backend, value, day in (("cuda", 287.2, "01"), ("opencl", 283.0, "02")):
        folder = tmp_path / "card" / f"gatecheck-{backend}"  # a gate check's folder: one machine
        folder.mkdir(parents=True)
        doc = {"run": {"started": f"2026-01-{day}T00:00:00+00:00"}, "device": {"backend": backend},
               "metrics": [{"name": name, "value": value, "test": test, "unit": "cycles"}]}
        (folder / "aa-1.json").write_text(json.dumps(doc))
    cuda, opencl = (aa_bands.aa_runs("card", b, tmp_path) for b in ("cuda", "opencl"))
    assert [(r.backend, r.machine, r.metrics[name]["value"]) for r in cuda] == [("cuda", "gatecheck-cuda", 287.2)]
    assert [(r.backend, r.machine, r.metrics[name]["value"]) for r in opencl] == [("opencl", "gatecheck-opencl", 283.0)]
    assert aa_bands.aa_runs("card", "vulkan", tmp_path) == []


def test_two_gate_checks_of_one_card_are_one_machine(tmp_path):
    """Runs that record one card UUID in two folders (a gate check, then the same board's runs again) are one
    machine, named by the first folder; a folder whose runs name no UUID is a machine of its own, and two UUIDs
    in one folder stay that folder."""
    name, test = "memory.l2.latency.cycles", "suites/test_memory_hierarchy.py::test_pointer_chase"
    for folder, card, day in (("gatecheck-b", "GPU-1", "01"), ("gatecheck-a-again", "GPU-2", "02"),
                              ("gatecheck-a", "GPU-2", "03"), ("gatecheck-c", "", "04"), ("gatecheck-b", "GPU-3", "05")):
        path = tmp_path / "card" / folder
        path.mkdir(parents=True, exist_ok=True)
        doc = {"run": {"started": f"2026-01-{day}T00:00:00+00:00"}, "device": {"backend": "cuda"},
               "card": {"uuid": card} if card else {}, "metrics": [{"name": name, "value": 1.0, "test": test}]}
        (path / f"aa-{day}.json").write_text(json.dumps(doc))
    runs = aa_bands.aa_runs("card", "cuda", tmp_path)
    assert [(r.label.split("/")[0], r.machine) for r in runs] == [
        ("gatecheck-b", "gatecheck-b"), ("gatecheck-a-again", "gatecheck-a"), ("gatecheck-a", "gatecheck-a"),
        ("gatecheck-c", "gatecheck-c"), ("gatecheck-b", "gatecheck-b")]


def test_a_hardware_figure_the_machines_spread_too_far_for_a_5_percent_gate_is_informational(device):
    """A hardware figure pooled over the machines either gates within 5 % or is recorded, not gated, naming the
    spread that keeps it out: none is left a wide pass. Where one could not be pooled (fewer than five runs with its
    test and identity), it keeps its row's band."""
    key, metrics, _, runs = device
    wide, declared = [], 0
    for name, entry in sorted(metrics.items()):
        if not detection.hardware(name) or name.startswith(derived_bands.DERIVED):
            continue
        why = catalog.measured_informational(name, entry)
        if why is not None:
            declared += "a hardware figure gates within" in why
            assert _judge(name, entry, float(entry["value"]) * 10).verdict == "ungated", name
            continue
        p = power(name, entry)
        if p.basis in ("bound", "absolute", "ungated") or p.mde is None or p.mde <= derived_bands.HARDWARE_TARGET:
            continue
        poolable = len(noise.run_values(entry)) + len(aa_bands.readings(name, entry, runs)) >= derived_bands.MIN_POOLED
        wide.append(f"{name} MDE {p.mde:.1%}{' (poolable)' if poolable else ''}")
    assert declared >= 10 and not [w for w in wide if w.endswith("(poolable)")], (key, declared, wide)


def test_an_opencl_section_is_pooled_only_once_two_new_machines_ran_it():
    """NVIDIA's OpenCL section of the H200: the A/A runs of one new machine beside the baseline's narrow or declare
    nothing (a third machine's run read tuner costs beyond the bands two machines would have set); with the runs of
    two new machines the section is pooled as the CUDA ones are, and no entry is left ``loose``."""
    metrics = baseline_file.load(REVIEWED_BASELINES, "nvidia-h200").data["backends"]["opencl"]["metrics"]
    runs = _runs("nvidia-h200", "opencl")
    assert len({r.machine for r in runs}) >= derived_bands.MIN_MACHINES
    name = "latency.fp32.sin.ns"  # 6 runs spread σ 2.2 %: a 5 % gate would not hold
    entry = metrics[name]
    assert _pooled(name, entry) and catalog.measured_informational(name, entry) is not None
    # the entry as the pooling found it: its own three runs and band
    before = {k: v for k, v in entry.items() if k != "provenance"}
    before.update(entry["provenance"][catalog.BAND_FROM]["baseline"][name])
    one = [r for r in runs if r.machine == "gatecheck-a9d6826-opencl"]
    # one machine beside the baseline's narrows nothing; this entry already gated looser than a hardware figure may
    # (its three runs' band) and spreads as far over the pooled runs, so it is declared at once, not left a wide pass
    left = derived_bands.pool("nvidia-h200", name, before, one, metrics)
    assert left.informational and left.machines == 1, left.why
    assert min(left.before, left.after) > derived_bands.widest(name), (left.before, left.after)
    narrowed = []
    for n, e in metrics.items():
        if n.startswith(("latency.", "throughput.", "memory.copy")) and _pooled(n, e):
            b = {k: v for k, v in e.items() if k != "provenance"}
            b.update(e["provenance"][catalog.BAND_FROM]["baseline"][n])
            o = derived_bands.pool("nvidia-h200", n, b, one, metrics)
            if o.mended is not None and not o.informational and not o.alarmed:
                narrowed.append(n)
    assert not narrowed, narrowed
    both = derived_bands.pool("nvidia-h200", name, before, runs, metrics)
    assert both.mended is not None and both.machines == 2, both.why
    loose = []
    for n, e in metrics.items():
        if e.get("tolerance") is None or catalog.measured_informational(n, e) is not None:
            continue
        p = power(n, e)
        if p.basis not in ("bound", "absolute", "ungated") and (p.mde is None or p.mde > LOOSE):
            loose.append(n)
    assert not loose, loose


def test_a_count_one_configuration_of_which_is_over_25_percent_of_it_is_recorded_not_gated(device):
    """A tuner's evaluation count gates no tighter than one configuration of its kernel's space (its grid step).
    Where its machines read it a configuration apart and one configuration is over the 25 % a derived figure may
    gate within, pooling declares it informational with that measured spread, never a `loose` gate: the H100's
    stencil2d dual annealing, 3.67 or 4.0 evaluations of a 223-configuration space, one of them 27 % of its value."""
    key, metrics, pooled, runs = device
    declared = []
    for name, entry in sorted(pooled.items()):
        step = derived_bands.grid_step(name, str(entry.get("unit", "")), metrics)
        if step is None or step / abs(float(entry["value"])) <= detection.LOOSE:
            continue
        out = derived_bands.pool(key, name, derived_bands.original(name, entry), runs, metrics)
        if out.after is None or out.after <= derived_bands.widest(name):
            continue
        declared.append(name)
        why = catalog.measured_informational(name, entry)
        assert out.informational and why is not None and "recorded, not gated" in why, (name, out.why, why)
        assert _judge(name, entry, float(entry["value"]) * 10).verdict == "ungated", name
    if key == "nvidia-h100-80gb-hbm3":
        assert "tuning.stencil2d.kt_dual_annealing.cost" in declared, declared
