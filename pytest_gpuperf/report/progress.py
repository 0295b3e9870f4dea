"""A live status line while a long test runs: which test, what it measured last, how long it has run and
an estimate of what is left — on the terminal pytest reports to, never on a stream pytest captures.

pytest captures what a test writes (at the file-descriptor level by default) until the test is over, so a
progress bar a test prints shows up only afterwards, if at all. The status line is written by this
plugin instead, through a duplicate of the terminal's file descriptor taken before any test ran: capture
redirects descriptor 1, not its duplicate. On a terminal the line is rewritten in place every second
below the reporter's current line and erased (the cursor put back) before pytest reports the test; in a
log (CI) a line is printed once a test has run ``--gpuperf-progress`` seconds and then every
:data:`LOG_EVERY_S` seconds, so a 90-second test is no longer a silent one.

What the line says: ``[i/N]`` and the test's short name (:func:`short_name`: the module's file name and
the test, not the folders it was installed into), its elapsed time, the last metric it recorded
(``gpuperf_record``), a task's progress where one reports it (:meth:`LiveStatus.task`: the tuner's
configurations, with the time left at the rate so far), and the session's time left: each test still to
run at the duration it took in the last session that ran it (:data:`DURATIONS`, kept in the user's cache
directory), a test no session has timed yet at its card model's first-run duration where the package ships one
(:data:`PRIORS`), else at the mean duration of the tests that finished. On a terminal
the line fits its width (:func:`fit`): the extras go first, then the wording gets terse, then the name is
shortened in the middle; the position, the elapsed
time and the time left stay. Off under pytest-xdist (its workers have no terminal) and with
``--gpuperf-progress=0``.
"""

from __future__ import annotations

import json
import math
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable

import pytest

from ..paths import UnsafeNameError, safe_name
from ..util.atomic import atomic_write_json
from ..util.memo import cache_root

#: seconds a test runs before its status line appears (``--gpuperf-progress``)
DEFAULT_AFTER_S = 5.0
#: a log (not a terminal) gets a line at most this often per test
LOG_EVERY_S = 30.0
#: the line is refreshed this often on a terminal
TICK_S = 1.0
_KEY = pytest.StashKey["LiveStatus"]()
#: the file, in the user's cache directory (:func:`~..util.memo.cache_root`), of each test's duration in the last
#: session that ran it (seconds by test id): what the next session's time left is estimated from
DURATIONS = "test-durations.json"


def durations_path() -> Path:
    """Where the tests' last durations are kept."""
    return cache_root() / DURATIONS


#: each shipped test function's mean duration on a card model's first run, shipped with the package
#: (``scripts/first_run_durations.py``): what a test the user's sessions have never timed is counted at
PRIORS = Path(__file__).resolve().parent / "durations"


def prior_file(key: str, backend: str) -> Path:
    """The shipped first-run durations of a card model (device key) and backend."""
    return PRIORS / f"{safe_name(key)}-{safe_name(backend, 'backend')}.json"


def load_priors(key: str, backend: str) -> dict[str, float]:
    """Seconds per test function (``suites/<file>::<test>``) on a first run of ``key`` and ``backend``; none
    where the package ships no such file."""
    try:
        doc = json.loads(prior_file(key, backend).read_text(encoding="utf-8"))
    except (OSError, ValueError, UnsafeNameError):  # none shipped, or a key no file can be named by
        return {}
    per = doc.get("seconds_per_test") if isinstance(doc, dict) else None
    return load_durations_from(per) if isinstance(per, dict) else {}


def load_durations(path: Path) -> dict[str, float]:
    """The durations kept at ``path`` (test id → seconds); none where the file is missing or is not such a
    mapping (a cache: it only ever makes an estimate better)."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return load_durations_from(doc) if isinstance(doc, dict) else {}


def load_durations_from(doc: dict[Any, Any]) -> dict[str, float]:
    """The (id → seconds) pairs of ``doc`` that are a name and a finite, non-negative number."""
    return {k: float(v) for k, v in doc.items() if isinstance(k, str) and isinstance(v, (int, float))
            and not isinstance(v, bool) and math.isfinite(v) and v >= 0}


def save_durations(path: Path, measured: dict[str, float]) -> None:
    """Keep ``measured`` (test id → seconds) at ``path``, over what the file held for the same ids; atomic, and
    nothing where it cannot be written (the next session then estimates from its own tests)."""
    if not measured:
        return
    try:
        atomic_write_json(path, {**load_durations(path), **measured})
    except OSError:
        pass


def add_option(group: Any) -> None:
    """``--gpuperf-progress`` in the plugin's option group."""
    group.addoption(
        "--gpuperf-progress", type=float, default=DEFAULT_AFTER_S, metavar="SECONDS",
        help="show a live status line (test, last measurement, elapsed, time left) for tests running longer "
             "than SECONDS; in a log one line then and every 30 s; 0: never (default: %(default)s)")


def duration(seconds: float, narrow: bool = False) -> str:
    """``42 s``, ``3 min 05 s``, ``1 h 02 min``; ``narrow``: ``42s``, ``3m05s``, ``1h02m`` for a narrow terminal."""
    s = int(round(seconds))
    sec, mins, hours = ("s", "m", "h") if narrow else (" s", " min ", " h ")
    if s < 60:
        return f"{s}{sec}"
    if s < 3600:
        return f"{s // 60}{mins}{s % 60:02d}{sec}"
    return f"{s // 3600}{hours}{s % 3600 // 60:02d}{mins.rstrip()}"


def terse(seconds: float) -> str:
    """:func:`duration` for a narrow terminal."""
    return duration(seconds, narrow=True)


def short_name(nodeid: str) -> str:
    """A test's id without the folders of its file and the ``.py``: ``test_probes::test_x[opencl:0]`` for
    ``.venv/lib/python3.11/site-packages/pytest_gpuperf/suites/test_probes.py::test_x[opencl:0]`` (where a
    package is installed says nothing about which test runs, and would fill a narrow line)."""
    path, sep, rest = nodeid.partition("::")
    base = path.rsplit("/", 1)[-1]
    base = base[:-3] if base.endswith(".py") else base
    return base + sep + rest if sep else base


def middle_cut(text: str, width: int) -> str:
    """``text`` in at most ``width`` characters, cut in the middle (a third kept from the start, the rest
    from the end, where a test's parameters are)."""
    if len(text) <= width:
        return text
    if width <= 1:
        return "…"[:max(0, width)]
    head = (width - 1) // 3
    return text[:head] + "…" + text[len(text) - (width - 1 - head):]


def cut_name(name: str, width: int) -> str:
    """A :func:`short_name` in at most ``width`` characters: the module's name is cut first (in its
    middle), then, where the test's own name and parameters alone are too wide, the module goes and
    they are cut in their middle."""
    if len(name) <= width:
        return name
    module, sep, test = name.partition("::")
    room = width - len(test) - len(sep)
    if sep and room >= 6:
        return middle_cut(module, room) + sep + test
    return middle_cut(test if sep else name, width)


#: the fewest characters of a test's name a line keeps before it gives up its extras or wording
NAME_MIN = 16


def fit(layouts: list[Callable[[str], str]], name: str, width: int | None) -> str:
    """A line of ``layouts`` (each a function of the test's name, richest first) in ``width`` characters:
    the first that shows the whole name, else the first that leaves it :data:`NAME_MIN` characters (the
    name cut by :func:`cut_name`), else the last with the name cut to what is left (and the line cut at
    its end where even that is too wide). ``width=None``: the first layout, nothing cut (a log)."""
    if width is None:
        return layouts[0](name)
    rooms = [(layout, width - len(layout(""))) for layout in layouts]
    for need in (len(name), min(len(name), NAME_MIN)):
        for layout, room in rooms:
            if room >= need:
                return layout(cut_name(name, room))
    last, room = rooms[-1]
    text = last(cut_name(name, max(1, room)))
    return text if len(text) <= width else text[:width - 1] + "…"


class Task:
    """A unit of work inside a test that knows how far it is (``done`` of ``total`` ``what``)."""

    def __init__(self, status: "LiveStatus", label: str, what: str) -> None:
        self.status, self.label, self.what = status, label, what
        self.start = time.monotonic()
        self.done = self.total = 0

    def __call__(self, done: int, total: int) -> None:
        self.done, self.total = int(done), int(total)

    def describe(self) -> str:
        text = f"{self.label}: {self.done}/{self.total} {self.what}"
        if 0 < self.done < self.total:
            left = (time.monotonic() - self.start) / self.done * (self.total - self.done)
            text += f", ~{duration(left)} left"
        return text

    def close(self) -> None:
        self.status.end_task(self)


class LiveStatus:
    """The status line of one session (a pytest plugin object: it implements the runtest hooks)."""

    def __init__(self, fd: int | None, tty: bool, after_s: float, writer: Any = None) -> None:
        self.fd, self.tty, self.after_s = fd, tty, after_s
        self.writer = writer  # the terminal reporter's TerminalWriter (known once collection is done)
        self.lock = threading.Lock()
        self.total = 0
        self.index = 0
        self.order: list[str] = []  # the session's test ids, in the order they run
        self.expected: dict[str, float] = {}  # each test's duration in the last session that ran it
        self.measured: dict[str, float] = {}  # this session's, by test id
        self.test: str | None = None
        self.started = 0.0
        self.last = ""
        self.tasks: list[Task] = []
        self.shown = False  # a terminal line is on screen
        self.column = 0  # where the reporter's line ended when the status line went below it
        self.next_log = 0.0
        self.wake = threading.Event()
        self.thread: threading.Thread | None = None

    @property
    def enabled(self) -> bool:
        return self.fd is not None and self.after_s > 0

    # ---- what tests report ---------------------------------------------------------------------------
    def recorded(self, name: str) -> None:
        """The test recorded metric ``name``: the line names it as the last measurement."""
        self.last = name

    def task(self, label: str, what: str = "steps") -> Task:
        """A task whose progress the line shows; call it with (done, total), then ``close()`` it."""
        t = Task(self, label, what)
        with self.lock:
            self.tasks.append(t)
        return t

    def end_task(self, task: Task) -> None:
        with self.lock:
            if task in self.tasks:
                self.tasks.remove(task)

    # ---- the line ------------------------------------------------------------------------------------
    def line(self, now: float | None = None, width: int | None = None) -> str:
        """The status line at ``now``, at most ``width`` characters (:func:`fit`; None: no limit)."""
        now = time.monotonic() if now is None else now
        elapsed = now - self.started
        where = f"[{self.index}/{self.total or '?'}]"
        tasks = [t.describe() for t in self.tasks]
        last = [f"last measured {self.last}"] if self.last else []
        left = self.total - self.index
        eta = self.time_left(elapsed) if left > 0 else None
        tail = [f"session ~{duration(eta)} left for {left} more test(s)"] if eta is not None else []
        terse_tail = f" ~{terse(eta)} left" if eta is not None else ""

        def wordy(keep: list[str]) -> Callable[[str], str]:
            return lambda name: " · ".join([f"gpuperf {where} {name}: running {duration(elapsed)}", *keep, *tail])

        def brief(keep: list[str], head: str = f"{where} ") -> Callable[[str], str]:
            return lambda name: " · ".join([f"{head}{name} {terse(elapsed)}", *keep]) + terse_tail

        # what a narrower line gives up first: the last metric's name, then the tasks (the latest first),
        # the wording, and at last the position (the time left says how far the session is)
        kept = [last + tasks] + [tasks[:n] for n in range(len(tasks), -1, -1)]
        layouts = [wordy(k) for k in kept] + [brief(k) for k in kept] + [brief([], "")]
        return fit(layouts, short_name(self.test or ""), width)

    def prime(self, first_run: dict[str, float]) -> None:
        """Count each test (id → seconds) that no session of the user's has timed at its card model's first-run
        duration (:func:`load_priors`), not at the mean of the tests that happen to finish first."""
        with self.lock:
            for test, seconds in first_run.items():
                self.expected.setdefault(test, seconds)

    def time_left(self, elapsed: float) -> float | None:
        """Seconds the session has left: the running test's last duration less what it has run, and each test
        after it at its last duration (:attr:`expected`), at the mean of this session's tests where it has none;
        None while nothing gives a duration."""
        took = list(self.measured.values())
        mean = sum(took) / len(took) if took else None
        rest = self.order[self.index:]
        unknown = sum(1 for t in rest if t not in self.expected)
        if unknown and mean is None:
            return None
        now = max(0.0, self.expected.get(self.test or "", 0.0) - elapsed)
        return now + sum(self.expected.get(t, mean or 0.0) for t in rest)

    def _write(self, text: str) -> None:
        try:
            os.write(self.fd, text.encode("utf-8", "replace"))
        except OSError:  # the terminal went away: say nothing more
            self.fd = None

    def _show(self, now: float) -> None:
        """Write the line (under the lock): in place on a terminal, as a new log line otherwise."""
        if self.fd is None or self.test is None or now - self.started < self.after_s:
            return
        if self.tty:  # one column short of the width: a full line would wrap on some terminals
            text = self.line(now, max(20, (self.writer.fullwidth if self.writer is not None else 100) - 1))
            if not self.shown:
                self.column = self.writer.width_of_current_line if self.writer is not None else 0
                self._write("\n")
                self.shown = True
            self._write("\r\x1b[K" + text)
        elif now >= self.next_log:
            self._write(f"\n{self.line(now)}\n")
            self.next_log = now + LOG_EVERY_S

    def _clear(self) -> None:
        """Erase the terminal line and put the cursor back where the reporter left it (under the lock)."""
        if self.shown and self.fd is not None:
            self._write(f"\r\x1b[K\x1b[A\x1b[{self.column + 1}G")
        self.shown = False

    def _run(self) -> None:
        while not self.wake.wait(TICK_S):
            with self.lock:
                self._show(time.monotonic())

    # ---- pytest hooks --------------------------------------------------------------------------------
    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.total = len(session.items)
        self.order = [item.nodeid for item in session.items]
        if session.config.pluginmanager.get_plugin("terminalreporter") is None:  # no terminal (-p no:terminal)
            self.fd = None
        else:
            self.writer = session.config.get_terminal_writer()

    def pytest_runtest_logstart(self, nodeid: str, location: Any) -> None:
        with self.lock:
            self.index += 1
            self.test, self.started, self.last, self.tasks = nodeid, time.monotonic(), "", []
            self.next_log = self.started + self.after_s
        if self.thread is None:
            self.thread = threading.Thread(target=self._run, name="gpuperf-status", daemon=True)
            self.thread.start()

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        with self.lock:
            self._clear()  # the reporter writes the outcome now

    def pytest_runtest_logfinish(self, nodeid: str, location: Any) -> None:
        with self.lock:
            self._clear()
            if self.test is not None:
                self.measured[self.test] = time.monotonic() - self.started
            self.test = None

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self.wake.set()
        self._close()
        save_durations(durations_path(), self.measured)

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        self._close()  # a session that ended before its first test

    def _close(self) -> None:
        """Erase the line and close the descriptor — under the lock, so the thread never writes to a
        descriptor number the process may already have reused."""
        with self.lock:
            self._clear()
            self.test = None
            if self.fd is not None:
                os.close(self.fd)
                self.fd = None


def _terminal_fd() -> tuple[int | None, bool]:
    """A duplicate of the terminal's descriptor (capture cannot redirect it), and whether it is a tty."""
    stream = sys.__stdout__ if sys.__stdout__ is not None else sys.stdout
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):  # an in-process stream without a descriptor
        return None, False
    try:
        return os.dup(fd), os.isatty(fd)
    except OSError:
        return None, False


def start(config: pytest.Config, shown: bool = True) -> None:
    """Register the status line of this session (the plugin's ``pytest_configure`` calls it last);
    ``shown=False`` where this process should draw none (an xdist worker or controller)."""
    after = float(config.getoption("--gpuperf-progress"))
    if after <= 0 or not shown:
        return
    fd, tty = _terminal_fd()
    if fd is None:
        return
    status = LiveStatus(fd, tty, after)
    status.expected = load_durations(durations_path())
    config.stash[_KEY] = status
    config.pluginmanager.register(status, "gpuperf-status")


def prime(config: pytest.Config, tests: list[tuple[str, str, str, str]]) -> None:
    """The first-run durations of ``tests`` — (pytest id, device key, backend, ``suites/<file>::<test>``) — for
    the status line's time left (nothing where the line is off or the package ships none for a card)."""
    status = of(config)
    if status is None:
        return
    priors: dict[tuple[str, str], dict[str, float]] = {}
    found = {}
    for nodeid, key, backend, function in tests:
        if (key, backend) not in priors:  # each card's file read once
            priors[key, backend] = load_priors(key, backend)
        table = priors[key, backend]
        if function in table:
            found[nodeid] = table[function]
    status.prime(found)


def of(config: pytest.Config) -> LiveStatus | None:
    """The session's status line, or None where it is off."""
    return config.stash.get(_KEY, None)


def noting(config: pytest.Config) -> Callable[[str], None]:
    """What to call with each metric a test records (does nothing where the line is off)."""
    status = of(config)
    return status.recorded if status is not None else (lambda name: None)
