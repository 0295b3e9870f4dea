"""History under concurrent writers and with damaged files (issue 12), through the JSON-lines file's own
functions (``history.jsonl``) and the store the plugin calls: real processes, real files.

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

from pytest_gpuperf.history.backends import read_runs

from pytest_gpuperf.history.target import HistoryTargetError
from pytest_gpuperf.history import jsonl

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}

APPENDER = textwrap.dedent('''
    import sys
    from pytest_gpuperf.history import jsonl
    path, wid, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    for i in range(n):
        jsonl.append_record(path, {"writer": wid, "i": i, "pad": "x" * (i % 97)})
''')


def test_four_processes_times_300_appends_lose_no_line(tmp_path):
    path = tmp_path / "h.jsonl"
    procs = [subprocess.Popen([sys.executable, "-c", APPENDER, str(path), str(w), "300"], env=ENV,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for w in range(4)]
    outs = [p.communicate(timeout=300)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    records = jsonl.records(path)
    assert sorted((r["writer"], r["i"]) for r in records) == [(w, i) for w in range(4) for i in range(300)]
    assert all(json.loads(line) for line in path.read_text().splitlines())


@pytest.mark.parametrize("content", [b"\xff\xfe garbage\n", b'{"ok": 1}\n{"torn": \n'])
def test_damaged_history_is_refused_on_append_and_read_with_the_line_number(tmp_path, content):
    path = tmp_path / "h.jsonl"
    path.write_bytes(content)
    with pytest.raises(HistoryTargetError, match=r"h.jsonl line \d+ is not a JSON record"):
        jsonl.append_record(path, {"run": 1})
    with pytest.raises(HistoryTargetError, match=r"line \d+ is not a JSON record"):
        jsonl.records(path)
    with pytest.raises(HistoryTargetError, match=r"line \d+ is not a JSON record"):
        read_runs(str(path))
    assert path.read_bytes() == content


# ---- history input: broken files, credentials, a full disk --------------------------------------------------
import copy  # noqa: E402
import gzip  # noqa: E402

from pytest_gpuperf.cli import main  # noqa: E402
from pytest_gpuperf.history.backends import check  # noqa: E402
from pytest_gpuperf.util import jsonio  # noqa: E402

GOOD = ROOT / "results/nvidia-h100-80gb-hbm3/memory-cuda.json.xz"
OTHER = ROOT / "results/nvidia-h100-80gb-hbm3/memory-r2-cuda.json.xz"


def _broken_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """Two good results files, a torn JSON, a truncated .json.gz, a results document whose value reads
    "fast", and a compare report of the two good files (another kind)."""
    folder = tmp_path / "results"
    folder.mkdir()
    for run in (GOOD, OTHER):  # whole copies: the committed files may be stored as deltas of the device's anchor
        jsonio.write_xz(folder / run.name, jsonio.read_bytes(run))
    (folder / "torn.json").write_text('{"schema": "pytest-gpuperf/1", "device": {"key": "x"}, "metrics": [')
    (folder / "cut.json.gz").write_bytes(gzip.compress(jsonio.read_text(GOOD).encode())[:400])
    doc = copy.deepcopy(jsonio.read_json(GOOD))
    doc["metrics"][0]["value"] = "fast"
    (folder / "fast.json").write_text(json.dumps(doc))
    assert main(["compare", str(GOOD), "--against", str(OTHER), "--format", "json", "-o", str(folder / "compare-aa.json")]) == 0
    capsys.readouterr()  # compare's one line is not the import's output
    return folder


def test_import_keeps_every_good_file_names_each_broken_one_and_exits_non_zero(tmp_path, capsys):
    folder = _broken_folder(tmp_path, capsys)
    db = str(tmp_path / "h.db")
    assert main(["history", "import", str(folder), "--db", db]) == 1
    out, err = capsys.readouterr()
    assert "imported 2 new run(s) of 2" in out and "3 broken file(s) NOT imported" in out
    errors = [line for line in err.splitlines() if line.startswith("error: ")]
    assert len(errors) == 3 and len(err.splitlines()) == 4, err  # three broken, one of another kind
    assert any("torn.json: not valid JSON" in e for e in errors)
    assert any("cut.json.gz: not valid JSON" in e for e in errors)
    (fast,) = [e for e in errors if "fast.json" in e]
    assert "does not follow schema 'pytest-gpuperf/1': metrics/0/value:" in fast and '"fast"' in fast
    assert "skipped " in err and "compare-aa.json: schema 'pytest-gpuperf-compare/1'" in err
    assert len(read_runs(db)) == 2
    # the same schema as compare: it refuses the file just the same
    assert main(["compare", str(folder / GOOD.name), str(folder / "fast.json")]) == 2
    assert "does not follow schema 'pytest-gpuperf/1'" in capsys.readouterr().err


SECRET = "s3cr3t-pw"


def test_a_password_in_a_postgresql_url_is_never_printed(postgres_url, capsys):
    """The server trusts local connections, so the password in the URL is not needed — and it must appear
    nowhere: not in import's output, not in any error."""
    with_password = postgres_url.replace("postgresql://gpuperf@", f"postgresql://gpuperf:{SECRET}@")
    assert SECRET in with_password
    assert main(["history", "import", str(GOOD), "--db", with_password]) == 0
    assert main(["history", "list", "--db", with_password]) == 0
    unreachable = with_password.replace("/history?", "/nosuchdb?")
    in_query = postgres_url.replace("/history?", f"/nosuchdb?password={SECRET}&")
    for url in (unreachable, in_query):
        assert main(["history", "list", "--db", url]) == 2
    assert main(["history", "import", str(GOOD), "--db", f"mysql://root:{SECRET}@db/h"]) == 2
    out, err = capsys.readouterr()
    assert "imported 1 new run(s)" in out and "gpuperf:***@" in out and "cannot reach history database" in err
    assert "unknown scheme 'mysql'" in err and "root:***@db" in err
    assert SECRET not in out + err
    assert SECRET not in str(check(with_password)) and "***" in str(check(with_password))


@pytest.fixture
def small_disk(tmp_path):
    """A 1 MiB tmpfs mounted on a folder (root only); skipped where mounting is not allowed."""
    mnt = tmp_path / "disk"
    mnt.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mnt)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs to fill ({done.stderr.strip() or 'mount failed'}): needs root")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def _fill(folder: Path) -> Path:
    """Write zeros into ``folder`` until its disk is full."""
    filler = folder / "filler"
    with open(filler, "wb") as fh:
        try:
            while True:
                fh.write(b"\0" * 65536)
                fh.flush()
        except OSError:
            pass
    return filler


def test_a_full_disk_is_reported_as_a_full_disk_and_the_history_stays_intact(small_disk, capsys):
    db = str(small_disk / "h.db")
    small = str(ROOT / "results/pocl-pthread-skylake-avx512-amd-epyc/suites-opencl.json.xz")
    assert main(["history", "import", small, "--db", db]) == 0
    filler = _fill(small_disk)
    capsys.readouterr()
    assert main(["history", "import", str(GOOD), "--db", db]) == 2
    err = capsys.readouterr().err
    assert "the disk is full" in err and "not a usable SQLite database" not in err and "move it away" not in err
    filler.unlink()
    (run,) = read_runs(db)  # the first run, whole; nothing of the second
    assert run.device_key == "pocl-pthread-skylake-avx512-amd-epyc"
    jsonl_target = small_disk / "h.jsonl"
    assert main(["history", "import", small, "--db", str(small_disk / "h2.db")]) == 0
    filler = _fill(small_disk)
    with pytest.raises(HistoryTargetError, match="the disk is full"):
        jsonl.append_record(jsonl_target, {"run": "x" * 200_000})
    assert not jsonl_target.exists() or jsonl_target.read_bytes() == b""  # no torn line left behind
