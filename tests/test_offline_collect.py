"""``gpuperf offline collect`` never loses a power corpus: one brought back (plain, or compressed where the
host resumed a compressed one) beside the store's corpus of the same card is joined with it (the store's
measurement kept, the other as a repeat) in the form the store keeps it; one the store lacks is placed
compressed, where the next collection resumes it. Real saved data: the committed H100 corpus."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from pytest_gpuperf.cli import main as gpuperf
from pytest_gpuperf.studies.static_power.power_model import load_corpus, save_corpus
from pytest_gpuperf.util import jsonio

ROOT = Path(__file__).resolve().parents[1]
KEY = "nvidia-h100-80gb-hbm3"
NAME = "power-corpus-cuda.json"


def _parts(tmp: Path) -> tuple[Path, Path]:
    """Two collections of the H100 corpus: configurations 0-29, and 20-39 (20-29 measured again, other watts)."""
    dev, entries = load_corpus(ROOT / "results" / KEY / (NAME + ".xz"))
    entries = [dataclasses.replace(e, info={k: v for k, v in e.info.items() if k != "repeats"}) for e in entries]
    a, b = tmp / "a.json", tmp / "b.json"
    save_corpus(a, dev, entries[:30])
    save_corpus(b, dev, [dataclasses.replace(e, watts=e.watts * 1.02) for e in entries[20:30]] + entries[30:40])
    return a, b


def _out(tmp: Path, corpus: Path) -> Path:
    """An OUT folder as run.sh leaves it, holding only a corpus collected on the host."""
    out = tmp / "out"
    (out / "results" / KEY).mkdir(parents=True)
    (out / "results" / KEY / NAME).write_bytes(corpus.read_bytes())
    return out


def test_a_returning_corpus_is_joined_with_the_stores(tmp_path, capsys):
    a, b = _parts(tmp_path)
    store = tmp_path / "results"
    (store / KEY).mkdir(parents=True)
    (store / KEY / NAME).write_bytes(a.read_bytes())
    assert gpuperf(["offline", "collect", str(_out(tmp_path, b)), "--into", str(store)]) == 0
    assert f"joined {NAME}" in capsys.readouterr().out
    _, joined = load_corpus(store / KEY / NAME)
    assert len(joined) == 40  # 30 kept + 10 new; the 10 measured twice carry their repeat
    assert sum(1 for e in joined if e.info.get("repeats")) == 10
    _, first = load_corpus(a)
    assert [e.watts for e in joined[20:30]] == [e.watts for e in first[20:30]]  # the store's measurement stays
    before = (store / KEY / NAME).read_bytes()
    assert gpuperf(["offline", "collect", str(tmp_path / "out"), "--into", str(store)]) == 0
    _, again = load_corpus(store / KEY / NAME)
    assert len(again) == 40 and sum(len(e.info.get("repeats") or []) for e in again) == 10  # no repeat twice
    assert json.loads(before)["entries"][0] == json.loads((store / KEY / NAME).read_bytes())["entries"][0]


def test_a_corpus_the_store_lacks_is_placed_compressed_and_a_compressed_one_is_joined_in_place(tmp_path, capsys):
    a, b = _parts(tmp_path)
    store = tmp_path / "results"
    assert gpuperf(["offline", "collect", str(_out(tmp_path, b)), "--into", str(store)]) == 0
    new = store / KEY / (NAME + ".xz")
    assert not (store / KEY / NAME).exists() and new.read_bytes()[:6] == b"\xfd7zXZ\x00"  # xz, as results are
    assert jsonio.read_bytes(new) == b.read_bytes()
    new.unlink()
    placed = store / KEY / (NAME + ".gz")
    jsonio.write_gz(placed, a.read_bytes())  # a store that keeps its corpus gzip-compressed keeps it so
    assert gpuperf(["offline", "collect", str(tmp_path / "out"), "--into", str(store)]) == 0
    assert f"joined {NAME} with {placed}" in capsys.readouterr().out
    assert not (store / KEY / NAME).exists() and placed.read_bytes()[:2] == b"\x1f\x8b"
    assert len(load_corpus(placed)[1]) == 40


def test_a_corpus_brought_back_compressed_is_recognised(tmp_path, capsys):
    """A host that resumed a compressed corpus brings back ``power-corpus-<backend>.json.gz``: the intake's
    pattern takes it, and it joins the store's corpus like a plain one."""
    a, b = _parts(tmp_path)
    out = tmp_path / "out"
    (out / "results" / KEY).mkdir(parents=True)
    jsonio.write_gz(out / "results" / KEY / (NAME + ".gz"), b.read_bytes())
    store = tmp_path / "results"
    (store / KEY).mkdir(parents=True)
    (store / KEY / NAME).write_bytes(a.read_bytes())  # a store that keeps it plain keeps it plain
    assert gpuperf(["offline", "collect", str(out), "--into", str(store)]) == 0
    assert f"joined {NAME}.gz with {store / KEY / NAME}" in capsys.readouterr().out
    assert len(load_corpus(store / KEY / NAME)[1]) == 40 and not (store / KEY / (NAME + ".gz")).exists()


def test_a_broken_corpus_is_named_and_an_archive_of_nothing_else_is_an_error(tmp_path, capsys):
    out = tmp_path / "out"
    (out / "results" / KEY).mkdir(parents=True)
    (out / "results" / KEY / NAME).write_text('{"schema": "something else"}')
    store = tmp_path / "results"
    assert gpuperf(["offline", "collect", str(out), "--into", str(store)]) == 2
    said = capsys.readouterr()
    assert f"skipped {NAME}: not a power corpus" in said.out and "nothing collected" in said.err
    assert not store.exists()


def test_runs_brought_back_are_imported_into_the_history_and_a_bad_history_is_named(tmp_path, capsys):
    """``--history``: the collected runs go into the history store (the same import as ``gpuperf history
    import``); a target that cannot be written fails the command naming it, after the results are placed."""
    from pytest_gpuperf.history.backends import read_runs

    out = tmp_path / "out"
    (out / "results" / KEY).mkdir(parents=True)
    doc = jsonio.read_bytes(ROOT / "results" / KEY / "memory-r3-opencl.json.xz")
    (out / "results" / KEY / "memory-r3-opencl.json").write_bytes(doc)
    store, history = tmp_path / "results", tmp_path / "h.db"
    assert gpuperf(["offline", "collect", str(out), "--into", str(store), "--history", str(history)]) == 0
    assert [r.device_key for r in read_runs(str(history))] == [KEY]
    folder = tmp_path / "a-folder"
    folder.mkdir()
    capsys.readouterr()
    assert gpuperf(["offline", "collect", str(out), "--into", str(tmp_path / "r2"), "--history", str(folder)]) == 2
    err = capsys.readouterr().err
    assert f"importing them into {folder} failed" in err and "is a directory" in err
    assert list((tmp_path / "r2" / KEY).glob("*.json.xz"))
