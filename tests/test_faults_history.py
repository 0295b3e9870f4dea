"""History under concurrent writers and with damaged files (issue 12), through the legacy API the
plugin used to call (``report.history``) and the store it calls now: real processes, real files.

The report said two processes × 300 appends lost lines, and a file with garbage lines was appended to
without a word and then failed to read with UnicodeDecodeError. The locking of ``history/jsonl.py``
(a ``filelock`` around check-and-append) had fixed both; these tests keep it that way.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pytest_gpuperf.history import HistoryTargetError, read_runs
from pytest_gpuperf.report import history

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}

APPENDER = textwrap.dedent('''
    import sys
    from pytest_gpuperf.report import history
    path, wid, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    for i in range(n):
        history.append(path, {"writer": wid, "i": i, "pad": "x" * (i % 97)})
''')


def test_four_processes_times_300_appends_lose_no_line(tmp_path):
    path = tmp_path / "h.jsonl"
    procs = [subprocess.Popen([sys.executable, "-c", APPENDER, str(path), str(w), "300"], env=ENV,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for w in range(4)]
    outs = [p.communicate(timeout=300)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    records = history.read(path)
    assert sorted((r["writer"], r["i"]) for r in records) == [(w, i) for w in range(4) for i in range(300)]
    assert all(json.loads(line) for line in path.read_text().splitlines())


@pytest.mark.parametrize("content", [b"\xff\xfe garbage\n", b'{"ok": 1}\n{"torn": \n'])
def test_damaged_history_is_refused_on_append_and_read_with_the_line_number(tmp_path, content):
    path = tmp_path / "h.jsonl"
    path.write_bytes(content)
    with pytest.raises(HistoryTargetError, match=r"h.jsonl line \d+ is not a JSON record"):
        history.append(path, {"run": 1})
    with pytest.raises(HistoryTargetError, match=r"line \d+ is not a JSON record"):
        history.read(path)
    with pytest.raises(HistoryTargetError, match=r"line \d+ is not a JSON record"):
        read_runs(str(path))
    assert path.read_bytes() == content
