"""Reviewed references: what one machine's first run measured, replayed by a fresh machine of the same card.

* ``gpuperf offline references CACHE --into DIR`` copies a cache's tuning tables, tuned picks and ncu profiles
  into ``<store>/<key>.json.xz`` files; it refuses a missing or empty cache and a device it holds nothing of,
  leaves out entries that do not name their key's parts, and keeps what the folder already holds.
* A store reads that layer (``$GPUPERF_REFERENCES``, else the package's references) only where the user's
  folder has no entry; it never writes there; ``off`` reads none; a folder that does not exist is an error.
* On PoCL: a table exported from one cache is replayed by a run with an empty cache (no point timed, the
  same picks), and the suite's figures say the table was a reviewed one; the ncu profile likewise, spot-checked.
* ``out_of_date`` names every reason an entry could no longer be hit (a key that is not its parts' digest, a
  changed kernel source, timing or plan); every reference the package ships passes it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_gpuperf.cli import main
from pytest_gpuperf.counters import ncu, ncu_reference as nr
from pytest_gpuperf.errors import GpuPerfError
from pytest_gpuperf.offline.reference_export import export
from pytest_gpuperf.paths import NCU_FOLDER, REFERENCE_STORES, REVIEWED_REFERENCES, TUNING_FOLDER
from pytest_gpuperf.schemas import validate
from pytest_gpuperf.tuning import reference
from pytest_gpuperf.tuning.kernels import by_name
from pytest_gpuperf.tuning.strategies import dao, exhaustive
from pytest_gpuperf.tuning.tuner import context
from pytest_gpuperf.util import jsonio, memo

from test_models_ncu_reference import H200, replay_ncu  # noqa: F401  (the ncu replayer fixture)

SIZES = {"m": 200, "n": 64}
SUITE = Path(__file__).resolve().parents[1] / "pytest_gpuperf" / "suites" / "test_workgroup_tuning.py"


def _ctx(dev):
    return context(dev, by_name("matvec_row"), dict(SIZES), seed=11)


@pytest.fixture
def measured(cl_device, tmp_path):
    """A cache folder whose tuning store holds one exhaustive table timed now on PoCL, and that table's picks."""
    cache = tmp_path / "cache"
    ctx = _ctx(cl_device)
    ref = reference.begin(ctx, 11, root=cache / TUNING_FOLDER)
    best, picked = exhaustive(ctx).best, dao(ctx).best
    ref = reference.finish(ref, ctx, best, root=cache / TUNING_FOLDER)
    assert ref.stored
    return cache, ref, best, picked


def _shipped(root: Path) -> dict[str, list[str]]:
    """Every entry file of a references folder and why it could not be hit ([] when it could)."""
    out: dict[str, list[str]] = {}
    for folder, schema in REFERENCE_STORES.items():
        for f in sorted((root / folder).glob("*")):
            entry = json.loads(jsonio.read_text(f))
            validate(entry, schema, source=str(f))
            name = f.name.removesuffix(".json.xz")
            check = reference.out_of_date if folder == TUNING_FOLDER else nr.out_of_date
            out[str(f)] = check(entry, name) if f.name.endswith(".json.xz") else ["not a .json.xz entry"]
    return out


# ---- the export -----------------------------------------------------------------------------------------
def test_export_copies_a_cache_into_a_references_folder_and_keeps_what_is_there(measured, tmp_path):
    cache, ref, _, _ = measured
    into = tmp_path / "refs"
    done = export(cache, into)
    target = into / TUNING_FOLDER / f"{ref.key}.json.xz"
    assert done.written == [target] and not done.kept and not done.skipped
    assert json.loads(jsonio.unxz(target.read_bytes(), target)) == json.loads(Path(ref.path).read_text())
    before = target.read_bytes()
    entry = json.loads(Path(ref.path).read_text())
    Path(ref.path).write_text(json.dumps(dict(entry, measured="2020-01-01T00:00:00+00:00")))
    again = export(cache, into)  # the folder's entry stays as reviewed
    assert again.kept == [target] and not again.written and target.read_bytes() == before
    replaced = export(cache, into, replace=True)
    assert replaced.written == [target] and target.read_bytes() != before
    assert "1 written" in replaced.describe()


def test_export_refuses_what_it_cannot_copy(measured, tmp_path):
    cache, ref, _, _ = measured
    with pytest.raises(GpuPerfError, match="no such folder"):
        export(tmp_path / "nowhere", tmp_path / "refs")
    (tmp_path / "empty").mkdir()
    with pytest.raises(GpuPerfError, match="holds no entry under tuning/ or ncu-reference/"):
        export(tmp_path / "empty", tmp_path / "refs")
    with pytest.raises(GpuPerfError, match="holds no entry of device nvidia-h200; its entries are of pocl-"):
        export(cache, tmp_path / "refs", devices=["nvidia-h200"])
    with pytest.raises(GpuPerfError, match="cannot name a file"):
        export(cache, tmp_path / "refs", devices=["../up"])
    entry = json.loads(Path(ref.path).read_text())
    del entry["key_fields"]
    Path(ref.path).write_text(json.dumps(entry))
    done = export(cache, tmp_path / "refs")
    assert not done.written and "names no key_fields" in done.skipped[0]
    Path(ref.path).write_text("{torn")
    torn = export(cache, tmp_path / "refs")
    assert not torn.written and len(torn.skipped) == 1 and torn.skipped[0].startswith(ref.path)


def test_the_command_line_exports_and_says_what_it_did(measured, tmp_path, capsys):
    cache, ref, _, _ = measured
    key = json.loads(Path(ref.path).read_text())["device"]
    assert main(["offline", "references", str(cache), "--into", str(tmp_path / "refs"), "--device", key]) == 0
    assert "1 written, 0 already there (kept), 0 left out" in capsys.readouterr().out
    assert main(["offline", "references", str(tmp_path / "none"), "--into", str(tmp_path / "refs")]) == 2
    assert "no such folder" in capsys.readouterr().err


# ---- the read-only layer --------------------------------------------------------------------------------
def test_the_layer_is_the_packages_unless_named_and_a_missing_folder_is_an_error(monkeypatch, tmp_path):
    monkeypatch.delenv(memo.REFERENCES_ENV, raising=False)
    assert memo.reference_folder(TUNING_FOLDER) == REVIEWED_REFERENCES / TUNING_FOLDER
    monkeypatch.setenv(memo.REFERENCES_ENV, "off")
    assert memo.reference_folder(TUNING_FOLDER) is None
    monkeypatch.setenv(memo.REFERENCES_ENV, str(tmp_path))
    assert memo.reference_folder(NCU_FOLDER) == tmp_path / NCU_FOLDER
    monkeypatch.setenv(memo.REFERENCES_ENV, str(tmp_path / "nowhere"))
    with pytest.raises(GpuPerfError, match="is not a folder: name a folder of reference entries"):
        memo.reference_folder(TUNING_FOLDER)


def test_a_fresh_cache_replays_a_reviewed_table_and_writes_only_its_own(measured, cl_device, tmp_path, monkeypatch):
    cache, cold, best, picked = measured
    export(cache, tmp_path / "refs")
    shipped = tmp_path / "refs" / TUNING_FOLDER / f"{cold.key}.json.xz"
    before = shipped.read_bytes()
    monkeypatch.setenv(memo.REFERENCES_ENV, str(tmp_path / "refs"))
    fresh = tmp_path / "fresh" / TUNING_FOLDER
    warm = _ctx(cl_device)
    timed: list[int] = []
    warm.ev.on_point = timed.append
    ref = reference.begin(warm, 11, root=fresh)
    assert ref.cached and ref.reviewed and ref.path == str(shipped) and ref.info()["reviewed"] is True
    assert exhaustive(warm).best == best and dao(warm).best == picked and timed == []
    reference.record_verified(ref, [best], root=fresh)  # what the run adds goes to the user's folder
    assert shipped.read_bytes() == before and (fresh / f"{cold.key}.json").is_file()
    monkeypatch.setenv(memo.REFERENCES_ENV, "off")
    assert not reference.begin(_ctx(cl_device), 11, root=tmp_path / "third").cached


def test_a_torn_reviewed_entry_is_a_miss_that_says_why(measured, cl_device, tmp_path, monkeypatch):
    from pytest_gpuperf.tuning.fixtures import StaleTuningEntry

    cache, cold, _, _ = measured
    export(cache, tmp_path / "refs")
    shipped = tmp_path / "refs" / TUNING_FOLDER / f"{cold.key}.json.xz"
    shipped.write_bytes(shipped.read_bytes()[:40])
    monkeypatch.setenv(memo.REFERENCES_ENV, str(tmp_path / "refs"))
    with pytest.warns(StaleTuningEntry, match="torn or not xz"):
        assert not reference.begin(_ctx(cl_device), 11, root=tmp_path / "fresh").cached


def test_the_suite_on_a_fresh_cache_records_that_its_table_was_reviewed(pytester, monkeypatch, cl_device):
    runs = {}
    for tag, cache in (("first", "a"), ("fresh", "b")):
        monkeypatch.setenv("GPUPERF_TUNING_CACHE", str(pytester.path / cache / TUNING_FOLDER))
        out = pytester.path / f"{tag}.json"
        result = pytester.runpytest("--gpuperf-device=opencl:0", "-p", "no:cacheprovider", f"--gpuperf-json={out}",
                                    f"{SUITE}::test_tune[opencl:0-matvec_row]")
        result.assert_outcomes(passed=1)
        runs[tag] = {m["name"]: m for m in json.loads(out.read_text())["metrics"]}
        if tag == "first":
            export(pytester.path / "a", pytester.path / "refs")
            monkeypatch.setenv(memo.REFERENCES_ENV, str(pytester.path / "refs"))
    first, fresh = runs["first"], runs["fresh"]
    assert first["tuning.matvec_row.optimum_us"]["info"]["reference"]["stored"] is True
    info = fresh["tuning.matvec_row.optimum_us"]["info"]["reference"]
    assert info["cached"] is True and info["reviewed"] is True
    assert set(fresh) == set(first) and all(fresh[n]["identity"] == first[n]["identity"] for n in fresh)
    costs = [n for n in first if n.endswith((".cost", ".device_cost"))]
    assert costs and all(fresh[n]["value"] == first[n]["value"] for n in costs)  # the reviewed table, replayed


def test_a_reviewed_ncu_profile_is_spot_checked_and_a_disagreement_profiles_anew(cl_device, replay_ncu, tmp_path,
                                                                                 monkeypatch):
    runs, cache = ncu.dataset_plan(), tmp_path / "cache"
    _, ref = nr.collect(cl_device, runs, replay_ncu, 60, tmp_path / "w1", root=cache / NCU_FOLDER)
    assert ref.stored and export(cache, tmp_path / "refs").written
    monkeypatch.setenv(memo.REFERENCES_ENV, str(tmp_path / "refs"))
    _, hit = nr.collect(cl_device, runs, replay_ncu, 60, tmp_path / "w2", root=tmp_path / "fresh")
    assert hit.cached and hit.reviewed and hit.path.endswith(".json.xz") and hit.spot["agrees"]
    assert hit.info()["reviewed"] is True and not (tmp_path / "fresh").exists()
    monkeypatch.setenv("REPLAY_SPOT", str(H200))  # the card no longer gives the reviewed counters
    _, miss = nr.collect(cl_device, runs, replay_ncu, 60, tmp_path / "w3", root=tmp_path / "fresh")
    assert not miss.cached and not miss.reviewed and miss.miss.startswith("spot check of the reviewed profile")
    assert miss.stored and miss.path == str(tmp_path / "fresh" / f"{miss.key}.json")


# ---- what could still be hit ----------------------------------------------------------------------------
def test_out_of_date_names_every_reason_an_entry_could_not_be_hit(measured):
    _, ref, _, _ = measured
    entry = json.loads(Path(ref.path).read_text())
    assert reference.out_of_date(entry, ref.key) == []
    assert "not to its name" in reference.out_of_date(entry, "exhaustive-000")[0]
    changed = dict(entry, key_fields=dict(entry["key_fields"], source="0" * 64))
    assert any("source of matvec_row changed" in w for w in reference.out_of_date(changed, ref.key))
    slow = dict(entry, key_fields=dict(entry["key_fields"], timing={"warmup": 9}))
    assert any("timing settings changed" in w for w in reference.out_of_date(slow, ref.key))
    gone = dict(entry, key_fields=dict(entry["key_fields"], bench="no_such_kernel"))
    assert any("no kernel 'no_such_kernel'" in w for w in reference.out_of_date(gone, ref.key))
    assert "older pytest-gpuperf" in reference.out_of_date({k: v for k, v in entry.items() if k != "key_fields"},
                                                           ref.key)[0]


def test_out_of_date_of_an_ncu_profile(replay_ncu, cl_device, tmp_path):
    _, ref = nr.collect(cl_device, ncu.dataset_plan(), replay_ncu, 60, tmp_path / "w", root=tmp_path / "c")
    entry = json.loads(Path(ref.path).read_text())
    assert nr.out_of_date(entry, ref.key) == []
    fields = dict(entry["key_fields"], sources=dict(entry["key_fields"]["sources"], K1="0" * 64))
    assert any("source of K1 changed" in w for w in nr.out_of_date(dict(entry, key_fields=fields), ref.key))
    fewer = dict(entry["key_fields"], runs=entry["key_fields"]["runs"][:-1])
    assert any("planned runs changed" in w for w in nr.out_of_date(dict(entry, key_fields=fewer), ref.key))


def test_a_stale_entry_in_a_references_folder_is_found(measured, tmp_path):
    cache, ref, _, _ = measured
    export(cache, tmp_path / "refs")
    assert _shipped(tmp_path / "refs") == {str(tmp_path / "refs" / TUNING_FOLDER / f"{ref.key}.json.xz"): []}
    entry = json.loads(Path(ref.path).read_text())
    stale = dict(entry, key_fields=dict(entry["key_fields"], source="0" * 64))
    jsonio.write_xz(tmp_path / "refs" / TUNING_FOLDER / f"{ref.key}.json.xz", json.dumps(stale).encode())
    assert any("changed" in w for why in _shipped(tmp_path / "refs").values() for w in why)


def test_every_reference_the_package_ships_can_still_be_hit():
    """A shipped entry whose kernel, timing or plan changed can never be hit again: remove it (git rm) or
    measure it anew on its card and export it again."""
    shipped = _shipped(REVIEWED_REFERENCES)
    assert shipped, f"no reviewed reference under {REVIEWED_REFERENCES}"  # the H200's ship with the package
    stale = {f: why for f, why in shipped.items() if why}
    assert not stale, stale
