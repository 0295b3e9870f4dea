"""Helpers of the history tests: a real PostgreSQL server in a temp dir, concurrent writer processes,
a private copy of the committed history, and a headless Chromium that returns the DOM after JS plus the
console messages."""

from __future__ import annotations

import atexit
import glob
import os
import pwd
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any
from urllib.parse import quote

ROOT = Path(__file__).resolve().parents[1]
COMMITTED_RESULTS = ROOT / "results"
_copies: dict[str, Any] = {}
#: the folder the xdist workers of a test run share (set by tests/conftest.py): :func:`copy_committed_history`
#: imports the history there once for all of them; None: into a temporary folder of this process
SHARED_ROOT: Path | None = None


def copy_committed_history() -> str:
    """The project's real history, built once per test session by ``gpuperf history import results/``
    from the committed results (the history database is generated, so it is not committed)."""
    if "db" not in _copies:
        from pytest_gpuperf.cli import main as gpuperf

        def build(folder: Path) -> None:
            assert gpuperf(["history", "import", str(COMMITTED_RESULTS), "--db", str(folder / "history.db")]) == 0

        if SHARED_ROOT is not None:
            from once_support import built_once

            folder = built_once(SHARED_ROOT, "committed-history", build)
        else:
            folder = Path(tempfile.mkdtemp(prefix="gpuperf-history-"))
            atexit.register(shutil.rmtree, folder, ignore_errors=True)
            build(folder)
        _copies["db"] = str(folder / "history.db")
    return _copies["db"]


def committed_detection() -> tuple[list, Any]:
    """(runs, ``detect_all`` of them) of the project's real history (:func:`copy_committed_history`), read
    and detected once per test session: each costs seconds, and the tests only read them."""
    if "detection" not in _copies:
        from pytest_gpuperf.history.backends import read_runs
        from pytest_gpuperf.history.detect import detect_all

        runs = read_runs(copy_committed_history())
        _copies["detection"] = (runs, detect_all(runs))
    return _copies["detection"]

WRITER = textwrap.dedent('''
    import sys
    from pytest_gpuperf.history.backends import record_run
    from pytest_gpuperf.history.records import TrendMetric, RunRecord
    target, wid, runs, metrics = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    for i in range(runs):
        run = RunRecord(date=f"2026-01-01T00:00:{wid:02d}.{i:04d}", commit=f"w{wid}-{i}", device_key="dev-key",
                        backend="opencl", host=f"writer{wid}", argv=["-k", str(i)],
                        metrics=[TrendMetric(name=f"area.m{j}", test="t.py::t", value=wid * 1e6 + i * 100 + j,
                                              unit="us", better="lower", median=float(j), mad=0.5, n=7,
                                              samples={"n": 7, "q50": float(j)}, identity={"w": wid, "i": i})
                                 for j in range(metrics)])
        assert record_run(target, run), "run reported as already stored"
''')


def run_writers(target: str, writers: int = 4, runs: int = 100, metrics: int = 12, timeout: float = 240) -> None:
    """Start ``writers`` processes at once, each writing ``runs`` runs; raise if any failed."""
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, target, str(w), str(runs), str(metrics)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for w in range(writers)]
    outs = [p.communicate(timeout=timeout)[0] for p in procs]
    failed = [(p.returncode, o[-2000:]) for p, o in zip(procs, outs) if p.returncode != 0]
    assert not failed, f"writer processes failed: {failed}"


def check_complete(runs: list, writers: int = 4, per: int = 100, metrics: int = 12) -> None:
    """Nothing lost (every writer's every run), nothing torn (every run has all its metrics, exact values)."""
    seen = {(r.host, r.commit) for r in runs}
    want = {(f"writer{w}", f"w{w}-{i}") for w in range(writers) for i in range(per)}
    assert seen == want, f"lost {len(want - seen)} run(s), unexpected {len(seen - want)}"
    assert len(runs) == writers * per, "duplicated runs"
    for r in runs:
        w, i = (int(x) for x in r.commit[1:].split("-"))
        got = {m.name: m.value for m in r.metrics}
        assert got == {f"area.m{j}": w * 1e6 + i * 100 + j for j in range(metrics)}, f"torn run {r.commit}"
        assert all(m.identity == {"w": w, "i": i} for m in r.metrics)


# ---- PostgreSQL ----------------------------------------------------------------------------------------
def pg_bin(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    cands = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return cands[-1] if cands else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PostgresServer:
    """initdb + pg_ctl into a temp dir, socket-only on a free port; as root, runs as user ``postgres``
    (PostgreSQL refuses to run as root)."""

    def __init__(self) -> None:
        self.initdb, self.pg_ctl = pg_bin("initdb"), pg_bin("pg_ctl")
        self.dir = Path(tempfile.mkdtemp(prefix="gpuperf-pg-", dir="/tmp"))
        self.port = free_port()
        self.prefix: list[str] = []
        if os.geteuid() == 0:
            user = next((u for u in ("postgres", "nobody") if _has_user(u)), None)
            if user is None:
                raise RuntimeError("running as root and no 'postgres' or 'nobody' user to run PostgreSQL as")
            pw = pwd.getpwnam(user)
            os.chown(self.dir, pw.pw_uid, pw.pw_gid)
            self.prefix = ["setpriv", f"--reuid={pw.pw_uid}", f"--regid={pw.pw_gid}", "--clear-groups"]

    def _run(self, *cmd: str) -> None:
        res = subprocess.run([*self.prefix, *cmd], capture_output=True, text=True, timeout=120, cwd=self.dir)
        if res.returncode != 0:
            log = (self.dir / "log").read_text() if (self.dir / "log").exists() else ""
            raise RuntimeError(f"{cmd[0]} failed: {res.stdout}{res.stderr}{log}")

    def start(self) -> str:
        self._run(self.initdb, "-D", str(self.dir / "data"), "-U", "gpuperf", "--auth=trust", "-E", "UTF8",
                  "--no-sync", "--no-instructions")
        opts = f"-p {self.port} -k {self.dir} -c listen_addresses='' -c fsync=off -c max_connections=40"
        self._run(self.pg_ctl, "-D", str(self.dir / "data"), "-o", opts, "-l", str(self.dir / "log"), "-w", "start")
        import psycopg

        with psycopg.connect(self.url("postgres"), autocommit=True) as conn:
            conn.execute("CREATE DATABASE history")
        return self.url("history")

    def url(self, db: str) -> str:
        return f"postgresql://gpuperf@/{db}?host={self.dir}&port={self.port}"

    def stop(self) -> None:
        try:
            self._run(self.pg_ctl, "-D", str(self.dir / "data"), "-m", "immediate", "stop")
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)


def _has_user(name: str) -> bool:
    try:
        pwd.getpwnam(name)
        return True
    except KeyError:
        return False


# ---- Chromium ------------------------------------------------------------------------------------------
def chromium() -> str | None:
    return next((p for p in (shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")) if p), None)


def browse(page: Path, screenshot: Path | None = None, size: str = "1400,1800",
           fragment: str = "") -> tuple[str, list[str]]:
    """(DOM after the page's scripts ran, console messages) from headless Chromium; optional screenshot.
    ``fragment``: the URL's ``#…`` (the dashboard opens the device it names). The screenshot is asked of
    the same launch as the DOM (a launch costs seconds on a multi-megabyte page); a Chromium whose headless
    mode does one thing a launch leaves it unwritten, and a second launch takes it."""
    exe = chromium()
    assert exe, "chromium not installed"
    common = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", f"--window-size={size}",
              "--virtual-time-budget=10000", "--enable-logging=stderr", "--v=0",
              f"--user-data-dir={tempfile.mkdtemp(prefix='gpuperf-chromium-')}"]
    uri = page.resolve().as_uri() + (f"#{quote(fragment, safe='')}" if fragment else "")
    shot_arg = []
    if screenshot is not None:
        screenshot.unlink(missing_ok=True)  # what exists afterwards is this launch's
        shot_arg = [f"--screenshot={screenshot}"]
    res = subprocess.run([*common, *shot_arg, "--dump-dom", uri], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    console = [line for line in res.stderr.splitlines() if re.search(r":CONSOLE[:(]", line)]
    if screenshot is not None and not screenshot.exists():
        shot = subprocess.run([*common, f"--screenshot={screenshot}", uri], capture_output=True,
                              text=True, timeout=120)
        assert shot.returncode == 0 and screenshot.exists(), shot.stderr[-2000:]
    return res.stdout, console
