"""The measured causes the catalog writes for the GPU launch figures' bands, checked against the saved H200 A/A runs:
host-submitted launches keep one rate per process (runs of one machine differ far more than the spans of one run),
graph launches keep one rate per machine (a machine's runs agree; one machine of six reads apart), and the launch
rate follows the process, not the stream it is issued on (the saved launch-queue study)."""

from __future__ import annotations

import re
import statistics

import pytest

from pytest_gpuperf.baselines import catalog
from pytest_gpuperf.probes import launch_streams
from suite_support import load_script

aa_bands = load_script("aa_bands")
pytestmark = pytest.mark.xdist_group("saved-aa-runs")

HOST_SUBMITTED = ("launch.empty.device_us", "launch.grid.1x256.device_us", "launch.grid.132x256.device_us",
                  "launch.grid.528x256.device_us", "launch.grid.2112x256.device_us", "launch.grid.8448x256.device_us")


def _by_machine(name: str) -> dict[str, list[dict]]:
    """The saved H200 A/A runs' entries of ``name`` timed over spans of launches (an identity), by machine."""
    out: dict[str, list[dict]] = {}
    for run in aa_bands.aa_runs("nvidia-h200", "cuda"):
        m = run.metrics.get(name)
        if m is not None and (m.get("identity") or {}).get("timing"):
            out.setdefault(run.machine, []).append(m)
    return out


def _rel_sd(values: list[float]) -> float:
    return statistics.stdev(values) / statistics.mean(values)


@pytest.mark.parametrize("name", HOST_SUBMITTED)
def test_host_submitted_launches_keep_one_rate_per_process(name):
    machines = {k: v for k, v in _by_machine(name).items() if len(v) >= 2}
    assert len(machines) >= 6, sorted(machines)
    within = statistics.median(_rel_sd(m["stats"]["samples"]) for ms in machines.values() for m in ms)
    between = statistics.median(_rel_sd([m["value"] for m in ms]) for ms in machines.values())
    low, high = map(float, re.search(r"differ by ([\d.]+)–([\d.]+) %", catalog.LAUNCH_GPU_CAUSE).groups())
    assert within < 0.001 and low <= round(100 * between, 1) <= high, (within, between)  # the range the cause states
    assert between > 10 * within
    assert "one rate per process" in catalog.wide_band_cause(name, "us")


def test_the_cited_run_reads_two_rates_on_one_machine():
    values = [round(m["value"], 2) for m in _by_machine("launch.empty.device_us")["gatecheck-e003155"]]
    assert values == [1.28, 1.37, 1.28]
    assert "1.28, 1.37 and 1.28 µs" in catalog.LAUNCH_GPU_CAUSE


def test_graph_launches_keep_one_rate_per_machine_and_one_machine_reads_apart():
    by = {k: [m["value"] for m in ms] for k, ms in _by_machine("launch.graph.empty.device_us").items()}
    assert len(by) == 14 and all(_rel_sd(v) < 0.0003 for v in by.values() if len(v) >= 2), by
    apart = {k for k, v in by.items() if not 0.501 <= round(statistics.mean(v), 3) <= 0.502}
    assert apart == {"graph-d6b9582", "gatecheck-300af00", "fresh-c984332"} and len(by) - len(apart) == 11, by
    assert round(statistics.mean(by["graph-d6b9582"]), 3) == 0.537 and round(by["gatecheck-300af00"][0], 3) == 0.498
    assert round(by["fresh-c984332"][0], 3) == 0.495
    assert all(v in catalog.LAUNCH_GRAPH_CAUSE for v in ("0.537", "0.498", "0.495"))
    assert "0.501–0.502 µs" in catalog.wide_band_cause("launch.graph.empty.device_us", "us")


def _study() -> list[dict]:
    """The launch-queue study's record in each run of the saved study on one H200 machine."""
    from pytest_gpuperf.util import jsonio

    folder = aa_bands.RESULTS / "nvidia-h200" / "queue-study-b3e0c59"
    runs = [jsonio.read_json(folder / f"study-{n}.json.xz") for n in (1, 2)]
    return [next(m for m in doc["metrics"] if m["name"] == "launch.streams.empty.device_us") for doc in runs]


def test_the_launch_rate_follows_the_process_not_the_stream():
    """One stream's rounds agree to 0.1 %, the eight streams of a process lie a few percent apart, the two
    processes' means differ by more than that, and the first stream slowed once the other seven were made."""
    study = _study()
    for m in study:
        per = m["info"]["per_queue_us"]
        assert len(per) == 8 and m["info"]["within_queue_pct"] < 0.1
        assert 2.0 <= launch_streams.spread_pct([statistics.median(q[1:]) for q in per]) <= 3.5
        assert per[0][0] < 0.9 * statistics.median(per[0][1:])  # before the other streams existed, then after
    a, b = (m["value"] for m in study)
    assert abs(a - b) / min(a, b) > 0.05
    assert "queue-study-b3e0c59" in catalog.LAUNCH_GPU_CAUSE and "1.34 µs before" in catalog.LAUNCH_GPU_CAUSE


def test_the_docs_table_of_the_study_is_the_saved_runs():
    """docs/probes.md's table of the launch-queue study holds the saved runs' figures, rounded as it prints them."""
    doc = (aa_bands.RESULTS.parent / "docs" / "probes.md").read_text(encoding="utf-8")
    for n, m in enumerate(_study(), start=1):
        info, first = m["info"], m["info"]["per_queue_us"][0]
        row = (f"| `study-{n}` | {info['within_queue_pct']:.2f} % | {info['between_queues_pct']:.2f} % | "
               f"{m['value']:.3f} µs | {first[0]:.3f} / {statistics.median(first[1:]):.3f} µs |")
        assert row in doc, row
