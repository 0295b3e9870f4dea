"""The JSONL history's index (``history/jsonl.py``): an append reads only what was added since the index was
written, yet a file changed under the index in a way it can see (length, inode, mtime, last line) is checked
whole again — a damaged line is refused with its line number, a run already there is not written twice."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pytest_gpuperf.history import jsonl
from pytest_gpuperf.history.backends import read_runs
from pytest_gpuperf.history.records import RunRecord, TrendMetric
from pytest_gpuperf.history.target import HistoryTargetError
from history_support import run_writers


def _run(i: int) -> RunRecord:
    return RunRecord(date=f"2026-01-01T00:00:{i:02d}", commit=f"c{i}", device_key="k", backend="opencl",
                     options={"run_id": f"run-{i}"},
                     metrics=[TrendMetric(name="a.b", test="t", value=float(i), unit="us", better="lower")])


def _history(tmp_path: Path, runs: int = 5) -> Path:
    path = tmp_path / "h.jsonl"
    for i in range(runs):
        assert jsonl.append(path, _run(i))
    return path


def _index(path: Path) -> dict:
    return json.loads(jsonl._index_path(path).read_text())


def test_the_index_follows_every_append_and_matches_a_rebuild(tmp_path):
    path = _history(tmp_path)
    index = _index(path)
    assert index["size"] == path.stat().st_size and index["lines"] == 5
    assert sorted(index["keys"]) == sorted(_run(i).run_key for i in range(5))
    jsonl._index_path(path).unlink()
    jsonl.validate(path)  # rebuilt from the whole file: the same index
    assert _index(path) == index


def test_a_run_already_there_is_refused_with_the_index_without_it_and_after_an_older_writer(tmp_path):
    path = _history(tmp_path)
    before = path.read_bytes()
    assert not jsonl.append(path, _run(2))  # from the index
    jsonl._index_path(path).unlink()
    assert not jsonl.append(path, _run(3))  # the index rebuilt from the file
    assert jsonl._index_path(path).is_file()
    assert path.read_bytes() == before
    with open(path, "ab") as fh:  # a writer that keeps no index appends a run: only this tail is new
        fh.write((json.dumps({"date": "d", "key": "k", "metrics": {}, "run_key": "older-writer"}) + "\n").encode())
    assert not jsonl.append_record(path, {"date": "d", "key": "k"}, key="older-writer")
    assert "older-writer" in _index(path)["keys"]
    assert jsonl.append(path, _run(9)) and len(jsonl.records(path)) == 7


def _plant(path: Path, line: int, garbage: bytes) -> None:
    lines = path.read_bytes().split(b"\n")
    lines[line - 1] = garbage
    path.write_bytes(b"\n".join(lines))


@pytest.mark.parametrize("garbage", [b"not json", b'{"torn": '], ids=["shorter", "longer"])
def test_a_damaged_line_planted_in_the_middle_is_caught_when_the_length_changes(tmp_path, garbage):
    path = _history(tmp_path)
    _plant(path, 3, garbage)
    planted = path.read_bytes()
    with pytest.raises(HistoryTargetError, match=r"h.jsonl line 3 is not a JSON record"):
        jsonl.append(path, _run(7))
    with pytest.raises(HistoryTargetError, match=r"h.jsonl line 3 is not a JSON record"):
        jsonl.validate(path)
    assert path.read_bytes() == planted


def test_a_damaged_line_of_the_same_length_is_caught_by_the_mtime_or_the_last_line(tmp_path):
    path = _history(tmp_path)
    third = path.read_bytes().split(b"\n")[2]
    stat = path.stat()
    _plant(path, 3, b"x" * len(third))  # the same length; the file's mtime moves on
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))  # even where timestamps are coarse
    with pytest.raises(HistoryTargetError, match=r"line 3 is not a JSON record"):
        jsonl.append(path, _run(7))
    path.unlink()
    path = _history(tmp_path)
    last = path.read_bytes().split(b"\n")[-2]
    stat = path.stat()
    _plant(path, 5, b"y" * len(last))  # the last line, with its mtime put back: its digest tells
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    with pytest.raises(HistoryTargetError, match=r"line 5 is not a JSON record"):
        jsonl.append(path, _run(7))


def test_the_indexed_prefix_is_not_read_again(tmp_path):
    """An edit that keeps the length, inode, mtime and last line is the one change the index cannot see: that
    such a file is appended to proves the append did not read the lines the index covers."""
    path = _history(tmp_path)
    second = path.read_bytes().split(b"\n")[1]
    stat = path.stat()
    _plant(path, 2, b"z" * len(second))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert jsonl.append(path, _run(7))
    with open(path, "ab") as fh:  # a writer that keeps no index appends: the tail alone is read
        fh.write(b'{"date": "older writer"}\n')
    assert jsonl.append(path, _run(8))
    assert _index(path)["lines"] == 8
    with pytest.raises(HistoryTargetError, match=r"line 2 is not a JSON record"):
        jsonl.records(path)  # readers read everything


def test_a_damaged_or_torn_tail_is_refused_with_the_line_number_counted_from_the_start(tmp_path):
    path = _history(tmp_path)
    with open(path, "ab") as fh:
        fh.write(b"\n{garbage}\n")  # a blank line 6, then line 7
    with pytest.raises(HistoryTargetError, match=r"h.jsonl line 7 is not a JSON record"):
        jsonl.append(path, _run(7))
    path.write_bytes(path.read_bytes()[: -len(b"\n{garbage}\n")] + b'{"date": "x"}')  # back, then a torn line
    with pytest.raises(HistoryTargetError, match="does not end with a newline"):
        jsonl.append(path, _run(7))


@pytest.mark.parametrize("index", [b"", b"{not json", b'{"version": 1}', b'{"version": 99, "size": 0}', b"[]"])
def test_an_unreadable_index_is_rebuilt(tmp_path, index):
    path = _history(tmp_path)
    jsonl._index_path(path).write_bytes(index)
    assert not jsonl.append(path, _run(1))
    assert jsonl.append(path, _run(8))
    assert _index(path)["lines"] == 6 and len(jsonl.records(path)) == 6


def test_an_index_of_a_replaced_file_is_not_trusted(tmp_path):
    path = _history(tmp_path)
    replacement = tmp_path / "other.jsonl"
    content = path.read_bytes()
    replacement.write_bytes(content.replace(b'"c1"', b'"c1x', 1))  # a damaged line 2, then moved over the file
    stat = path.stat()
    os.replace(replacement, path)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    with pytest.raises(HistoryTargetError, match=r"line 2 is not a JSON record"):
        jsonl.append(path, _run(7))


def test_four_writers_leave_an_index_that_matches_the_file(tmp_path):
    path = tmp_path / "h.jsonl"
    run_writers(str(path))
    assert len(read_runs(str(path))) == 400
    index = _index(path)
    jsonl._index_path(path).unlink()
    jsonl.validate(path)
    assert len(index["keys"]) == 400 and _index(path) == index
