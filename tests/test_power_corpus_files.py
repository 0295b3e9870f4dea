"""A power corpus is read, resumed and written in either form — ``power-corpus-<backend>.json`` or, as a
repository keeps it, ``….json.gz``: the collector resumes a compressed corpus and keeps it compressed,
``--out X.json`` finds ``X.json.gz``, the power suite finds it, and a torn ``.gz`` is an error naming the
file. The two committed corpora are kept compressed, and the tracked tree stays under its size budget."""

from __future__ import annotations

import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from pytest_gpuperf.studies.static_power import power_model as pmodel
from pytest_gpuperf.studies.static_power.power_model import Entry, load_corpus, save_corpus
from pytest_gpuperf.studies.static_power import collect as collect_cli
from pytest_gpuperf.studies.static_power import model_corpus, model_scores
from pytest_gpuperf.util import jsonio

ROOT = Path(__file__).resolve().parents[1]
GZIP = b"\x1f\x8b"
XZ = b"\xfd7zXZ\x00"
DEVICE = {"key": "card", "name": "Card", "backend": "cuda"}

#: the tracked tree's budget (bytes of every file git tracks): what a clone costs a newcomer. The saved gate-check
#: runs of every machine measured so far are also the fleet the fleet report reads (docs/fleet.md) and the runs
#: the reviewed GPU baselines' pooled bands name (``band_from``), so superseded runs are not pruned; they are
#: stored in the saved form and xz-compressed (``scripts/compact_saved.py --xz``): compact JSON, each metric's
#: one-line message only where it says more than the stored fields, and of the copy of the baseline entry that
#: judged it only what readers take (its value, direction and its runs' spread, the band, the delta where the values
#: do not give it, the reason; ``report/results.py`` ``saved_form``). A run's console log is generated from what
#: its results hold: it is kept only where a doc or test names it. A report a command remakes from saved runs
#: (a `gpuperf compare` of two A/A runs) is not kept, only what it compared (`results/aa-pairs.json`). A folder's
#: later runs are stored as their difference from its first A/A run, in a folder of one set of runs below a
#: device's (a baseline's, a study's) from its fullest run, and in a device's own folder from the fullest run of
#: their own set (``scripts/compact_saved.py --delta``, util/saved_delta.py): about a third of the bytes, read back
#: whole
TREE_BUDGET = 25 * 1024 * 1024


def _entry(kernel: str, config: str = "local=64", watts: float = 200.0) -> Entry:
    return Entry(kernel, config, {"x": 1.0}, watts, 1e-3, {"trips": [1.0]})


def test_a_compressed_corpus_round_trips_and_a_torn_one_is_named(tmp_path):
    path = tmp_path / "power-corpus-cuda.json.gz"
    save_corpus(path, DEVICE, [_entry("a"), _entry("b")], {"jobs": 2})
    assert path.read_bytes()[:2] == GZIP and not list(tmp_path.glob(".*.tmp"))  # compressed, written atomically
    device, entries = load_corpus(path)
    assert device == DEVICE and [e.kernel for e in entries] == ["a", "b"]
    plain = tmp_path / "plain.json"
    save_corpus(plain, DEVICE, entries, {"jobs": 2})
    assert jsonio.read_bytes(path) == plain.read_bytes()  # the same document, compressed
    path.write_bytes(path.read_bytes()[:40])
    with pytest.raises(ValueError, match="power-corpus-cuda.json.gz: not a readable compressed file"):
        load_corpus(path)


def test_the_collector_resumes_a_compressed_corpus_and_keeps_it_compressed(tmp_path, monkeypatch):
    """The collection keeps the two configurations the compressed file holds, measures the two it lacks, and
    rewrites the file compressed after each (no plain twin appears)."""
    path = tmp_path / "power-corpus-cuda.json.gz"
    save_corpus(path, DEVICE, [_entry("a"), _entry("b")])
    measured: list[str] = []

    def fake(device, sensor, job, table, timeout_s=10.0):
        measured.append(job.kernel)
        return _entry(job.kernel, watts=300.0)

    monkeypatch.setattr(model_corpus, "measure_job", fake)
    device = SimpleNamespace(power_sensor=lambda: (object(), "simulated"),
                             info=SimpleNamespace(spec="cuda:0", to_json=lambda: dict(DEVICE)))
    table = SimpleNamespace(sources={}, global_source="thesis")
    todo = [SimpleNamespace(kernel=k, config="local=64") for k in ("a", "b", "c", "d")]
    assert model_corpus.collect(device, table, path, 600.0, "cuda", log=lambda s: None, todo=todo) == (4, 4, [])
    assert measured == ["c", "d"]
    assert path.read_bytes()[:2] == GZIP and sorted(p.name for p in tmp_path.iterdir()) == [path.name]
    assert [(e.kernel, e.watts) for e in load_corpus(path)[1]] == [("a", 200.0), ("b", 200.0), ("c", 300.0),
                                                                   ("d", 300.0)]


def test_out_names_the_corpus_either_way(tmp_path, capsys):
    """``--out X.json`` where only ``X.json.gz`` exists writes (and so resumes) the compressed file and says
    so; the default is the device's corpus under the results folder, in whichever form it is there."""
    folder = tmp_path / "results" / "card"
    gz = folder / "power-corpus-cuda.json.gz"
    save_corpus(gz, DEVICE, [_entry("a")])
    assert collect_cli.corpus_out(None, tmp_path, "card", "cuda") == gz
    assert collect_cli.corpus_out(folder / "power-corpus-cuda.json", tmp_path, "card", "cuda") == gz
    assert collect_cli.corpus_out(tmp_path / "new.json", tmp_path, "card", "cuda") == tmp_path / "new.json"
    other = tmp_path / "b.json"
    save_corpus(other, DEVICE, [_entry("b")])
    assert collect_cli.main(["--merge", str(gz), str(other), "--out", str(folder / "power-corpus-cuda.json")]) == 0
    out = capsys.readouterr().out
    assert f"the corpus is kept compressed as {gz}; writing that file" in out
    assert not (folder / "power-corpus-cuda.json").exists() and gz.read_bytes()[:2] == GZIP
    assert [e.kernel for e in load_corpus(gz)[1]] == ["a", "b"]


def test_the_power_suite_finds_a_compressed_corpus(tmp_path):
    gz = tmp_path / "results" / "card" / "power-corpus-cuda.json.gz"
    save_corpus(gz, DEVICE, [_entry("a")])
    assert model_scores.corpus_path(SimpleNamespace(key="card", backend="cuda"), tmp_path) == gz
    assert pmodel.corpus_path(tmp_path / "results", "card", "cuda") == gz


@pytest.mark.parametrize("key", ["nvidia-h100-80gb-hbm3", "nvidia-h200"])
def test_the_committed_corpora_are_kept_compressed(key):
    path = pmodel.corpus_path(ROOT / "results", key, "cuda")
    assert path.name == "power-corpus-cuda.json.xz" and path.read_bytes()[:6] == XZ
    assert not (ROOT / "results" / key / "power-corpus-cuda.json").exists()
    assert len(load_corpus(path)[1]) == 158


def test_the_tracked_tree_stays_within_its_budget():
    """Every file git tracks, summed: evidence lands compressed (results, corpora) so the tree stays small."""
    try:
        listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        pytest.skip(f"not a git checkout ({exc})")
    files = [ROOT / name for name in listed.decode("utf-8").split("\0") if name]
    total = sum(p.stat().st_size for p in files if p.is_file())
    assert total < TREE_BUDGET, (f"the tracked tree holds {total / 2**20:.2f} MiB, over {TREE_BUDGET / 2**20:.0f} "
                                 f"MiB: compress new evidence (util/jsonio.write_xz; scripts/compact_saved.py --xz "
                                 f"stores saved runs in the saved form)")
