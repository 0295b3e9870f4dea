"""The host-load observer: readings of a real machine (no clock asserts on the measured work)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import numpy as np
import pytest

from pytest_gpuperf.timing import observers
from pytest_gpuperf.timing.measure import MeasureConfig, measure

BUSY = "import time\nt = time.perf_counter()\nwhile time.perf_counter() - t < {s}: pass\n"


def _hog(seconds: float) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", BUSY.format(s=seconds)])


def test_another_process_burning_a_core_reads_as_foreign_load():
    load = observers.HostLoad()
    hog = _hog(0.8)
    time.sleep(0.1)
    load.start()
    time.sleep(0.5)
    seen = load.stop()
    hog.wait()
    if seen is None:
        pytest.skip("no /proc/stat on this system")
    assert seen.foreign_cores > 0.6, seen
    assert observers.contended(seen)


def test_short_windows_are_judged_on_ten_ticks():
    tick = 1.0 / observers._HZ
    # one stray tick in a two-tick window is not half a core of foreign load
    assert not observers.contended(observers.Window(2 * tick, 0.0, 0.5 + 1e-9))
    assert observers.contended(observers.Window(20 * tick, 0.0, 0.6))
    assert observers.contended(observers.Window(20 * tick, 0.2, 0.0))
    assert not observers.contended(observers.Window(20 * tick, 0.05, 0.3))
    assert not observers.contended(None)


SRC = "__kernel void inc(__global float* x) { x[get_global_id(0)] += 1.0f; }"


def test_a_cpu_device_remeasures_a_contended_window_and_keeps_the_reading(cl_device):
    """With another process burning a core throughout, a CPU device's measurement is taken again
    RETRIES times; every window's reading lands in ``device.observations``, the last one marked."""
    if not cl_device.info.is_cpu:
        pytest.skip("only CPU devices re-measure on host load")
    k = cl_device.compile(SRC, "inc")
    buf = cl_device.to_device(np.zeros(1 << 16, np.float32))
    config = MeasureConfig(warmup=1, min_repeats=5, max_repeats=5000, target_rel_spread=0.0, budget_s=0.3)
    for _attempt in range(3):  # a loaded host may give the kept window to this process's own threads: try again
        cl_device.observations.clear()
        hogs = [_hog(6.0) for _ in range(max(2, os.cpu_count() or 2))]
        try:
            time.sleep(0.1)
            measure(cl_device, lambda: cl_device.launch(k, (1 << 16,), None, [buf]), config)
        finally:
            for hog in hogs:
                hog.kill()
                hog.wait()
        seen = cl_device.observations
        if seen and seen[-1]["busy"]:
            break
    assert len(seen) == observers.RETRIES + 1, seen
    assert [w["remeasured"] for w in seen] == [0] + [1] * observers.RETRIES
    # each window taken again was busy; the kept one is marked contended exactly when it was busy too
    assert [w["busy"] for w in seen[:-1]] == [1] * observers.RETRIES, seen
    last = seen[-1]
    assert last["contended"] == last["busy"], seen
    assert [w["contended"] for w in seen[:-1]] == [0] * observers.RETRIES  # only the kept window
    summary = observers.summarize(seen)
    assert summary["remeasured"] == observers.RETRIES and summary["busy"] == observers.RETRIES + last["busy"]
    assert summary["contended"] == last["busy"]
    if last["busy"]:  # the case the test is about, as it reads on a host the burners hold: every window busy
        assert [w["busy"] for w in seen] == [1] * len(seen) and last["foreign_cores"] > 0.5
        assert [w["contended"] for w in seen] == [0] * observers.RETRIES + [1]


def test_this_processs_own_cpu_time_is_taken_off_the_hosts_busy_time(monkeypatch):
    """A window's foreign load is the host's busy time less this process's own: the arithmetic on two
    readings of the counters (here given, so the host's real load cannot enter), not their sum."""
    from pytest_gpuperf.timing import observers

    stats = iter([(10.0, 1.0), (12.0, 1.25)])  # host busy and steal seconds, at start and at stop
    own = iter([3.0, 3.5])  # this process's CPU seconds
    monkeypatch.setattr(observers, "_proc_stat", lambda: next(stats))
    monkeypatch.setattr(observers, "_own_cpu", lambda: next(own))
    load = observers.HostLoad()
    load.start()
    window = load.stop()
    assert window is not None
    assert window.foreign_cores * window.wall_s == pytest.approx(1.5)  # 2.0 busy − 0.5 own
    assert window.steal_cores * window.wall_s == pytest.approx(0.25)


def test_every_observer_follows_the_kernel_tuner_interface_and_names_its_mark_and_verdict():
    """The host-load, power/throttle and tenant observers share one interface (before_start, after_start,
    during, after_finish, get_results; start/stop run them around a window), and each names the info key
    its summaries go to and the verdict a disturbed window leads to."""
    calls = []

    class Counting(observers.Observer):
        def before_start(self):
            calls.append("before_start")

        def after_start(self):
            calls.append("after_start")

        def after_finish(self):
            calls.append("after_finish")

        def get_results(self):
            calls.append("get_results")
            return len(calls)

    watch = Counting()
    watch.start()
    assert watch.stop() == 4 and calls == ["before_start", "after_start", "after_finish", "get_results"]
    kinds = {cls.mark: cls.verdict for cls in (observers.HostLoad, observers.PowerWatch, observers.TenantWatch)}
    assert kinds == {"host": "contended", "power": "throttled", "tenants": "contended"}
    assert set(kinds) == set(observers.MARKS)
    assert all(issubclass(c, observers.Observer) for c in (observers.HostLoad, observers.PowerWatch,
                                                            observers.TenantWatch))
    load = observers.HostLoad()
    load.start()
    window = load.stop()
    assert window is None or window.wall_s >= 0  # elsewhere than Linux nothing is read
    with pytest.raises(RuntimeError, match="before start"):
        load.stop()
