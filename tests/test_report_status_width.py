"""The live status line fits the terminal: the test's short name (not the folders a package was installed
into), its elapsed time and the session's time left are on the line at 40, 80 and 120 columns; the extras
(last metric, a task's progress) are given up first. No device: the line is text from the session's counts."""

from __future__ import annotations

import os
import re

import pytest
from _pytest._io import TerminalWriter

from pytest_gpuperf.report import progress

INSTALLED = (".venv/lib/python3.11/site-packages/pytest_gpuperf/suites/test_probes_memory.py"
             "::test_bandwidth_sweep[opencl:0-float4-1048576]")


def _status(test: str = INSTALLED, fd: int | None = None, writer: TerminalWriter | None = None) -> progress.LiveStatus:
    s = progress.LiveStatus(fd, True, 0.5, writer=writer)
    s.order = [f"suites/test_probes_memory.py::test_{i}" for i in range(345)]
    s.total, s.index, s.measured = len(s.order), 12, {t: 30.0 for t in s.order[:10]}
    s.test, s.started, s.last = test, 0.0, "probes.memory.bandwidth.float4.gbs"
    return s


def test_short_name_drops_the_install_folders_and_keeps_the_test():
    assert progress.short_name(INSTALLED) == "test_probes_memory::test_bandwidth_sweep[opencl:0-float4-1048576]"
    assert progress.short_name("suites/test_x.py") == "test_x"
    assert progress.short_name("test_y.py::TestA::test_b[1]") == "test_y::TestA::test_b[1]"


@pytest.mark.parametrize("columns", [40, 80, 120])
def test_the_line_fits_and_keeps_position_elapsed_and_time_left(columns):
    width = columns - 1
    line = _status().line(now=65.0, width=width)
    assert len(line) <= width, line
    assert re.match(r"(gpuperf )?(\[12/345\] )?test_", line), line
    assert "site-packages" not in line and ".py" not in line
    assert re.search(r"1m05s|1 min 05 s", line), line  # elapsed
    assert re.search(r"~2h46m left|~2 h 46 min left", line), line  # 333 tests at 30 s each
    assert "48576]" in line, line  # the end of the parameters, where tests of one function differ


def test_a_short_name_stays_whole_and_a_wide_terminal_keeps_the_extras():
    s = _status("suites/test_probes.py::test_lat[opencl:0]")
    task = s.task("tuning stencil2d", "configurations")
    task(3, 12)
    wide = s.line(now=65.0, width=299)
    assert "test_probes::test_lat[opencl:0]: running 1 min 05 s" in wide
    assert "last measured probes.memory.bandwidth.float4.gbs" in wide and "tuning stencil2d: 3/12" in wide
    middle = s.line(now=65.0, width=179)  # the metric's name goes before the task's progress
    assert "last measured" not in middle and "tuning stencil2d: 3/12" in middle and len(middle) <= 179
    narrow = s.line(now=65.0, width=39)
    assert "test_lat[opencl:0]" in narrow and "~2h46m left" in narrow and len(narrow) <= 39, narrow


def test_a_log_line_is_not_cut():
    line = _status().line(now=65.0)
    assert "test_probes_memory::test_bandwidth_sweep[opencl:0-float4-1048576]: running 1 min 05 s" in line
    assert "last measured probes.memory.bandwidth.float4.gbs" in line and "left for 333 more test(s)" in line


def test_what_reaches_an_80_column_terminal(tmp_path):
    """Through the terminal path: the width comes from the reporter's writer, the line is drawn in place."""
    read, write = os.pipe()
    writer = TerminalWriter(open(os.devnull, "w"))
    writer.fullwidth = 80
    s = _status(fd=write, writer=writer)
    s._show(now=65.0)
    os.close(write)
    with os.fdopen(read, "rb") as f:
        drawn = f.read().decode()
    text = drawn.rsplit("\x1b[K", 1)[-1]
    assert drawn.startswith("\n\r\x1b[K") and len(text) <= 79
    assert "test_bandwidth_sweep[opencl:0-float4-1048576] 1m05s ~2h46m left" in text, text


def test_the_time_left_takes_each_test_at_its_last_duration(tmp_path):
    """Each test still to run counts at its duration in the last session that ran it, the running one at what
    it has left of it (never below zero), a test never timed at this session's mean; nothing times a test yet:
    no estimate. The durations are kept across sessions, merged by test id, and a damaged file is no durations."""
    s = progress.LiveStatus(None, True, 0.5)
    s.order, s.total, s.index, s.test, s.started = ["t::a", "t::b", "t::c", "t::d"], 4, 2, "t::b", 0.0
    s.expected = {"t::b": 100.0, "t::c": 50.0}
    s.measured = {"t::a": 10.0}  # t::a took 10 s
    assert s.time_left(30.0) == 70.0 + 50.0 + 10.0  # b's rest, c's last duration, d at this session's mean
    assert s.time_left(130.0) == 60.0  # b ran past its last duration
    assert "~2 min 10 s left for 2 more test(s)" in s.line(now=30.0)
    s.measured = {}
    assert s.time_left(30.0) is None and "left for" not in s.line(now=30.0)  # d: nothing gives a duration
    s.expected["t::d"] = 5.0
    assert s.time_left(30.0) == 125.0

    path = tmp_path / "cache" / progress.DURATIONS
    progress.save_durations(path, {"t::a": 1.5, "t::b": 2.0})
    progress.save_durations(path, {"t::b": 3.0, "t::c": 0.25})
    assert progress.load_durations(path) == {"t::a": 1.5, "t::b": 3.0, "t::c": 0.25}
    path.write_text('{"t::a": "slow", "t::b": -1, "t::c": 2.5, "t::d": true}')
    assert progress.load_durations(path) == {"t::c": 2.5}
    path.write_text("[1, 2")
    assert progress.load_durations(path) == {} and progress.load_durations(tmp_path / "none.json") == {}


def test_a_first_run_counts_each_untimed_test_at_its_card_s_first_run_duration():
    """Before the user's sessions have timed a test, its card model's shipped first-run duration counts (the
    Nsight Compute test's minute and a half, not the mean of the quick tests that finished first); a duration the
    user's own sessions kept wins."""
    h200 = progress.load_priors("nvidia-h200", "cuda")
    counters = "suites/test_kernel_classes.py::test_kernel_classification_counters"
    assert h200[counters] > 30 and progress.load_priors("no-such-card", "cuda") == {}
    assert progress.load_priors("../../etc", "cuda") == {}  # a key that names no file is none, not a path
    s = progress.LiveStatus(None, True, 0.5)
    s.order, s.total, s.index, s.test, s.started = ["t::quick", "t::counters", "t::mine"], 3, 1, "t::quick", 0.0
    s.measured = {"t::earlier": 0.5}
    s.expected = {"t::mine": 2.0}  # the user's own last duration
    s.prime({"t::counters": h200[counters], "t::mine": 99.0})
    assert s.time_left(0.0) == h200[counters] + 2.0  # (quick is running) counters at the prior, mine as timed
    s.index, s.test = 0, None
    assert s.time_left(0.0) == 0.5 + h200[counters] + 2.0  # a test never timed anywhere at this session's mean
