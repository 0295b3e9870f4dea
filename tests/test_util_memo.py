"""The store of pure host computations: a hit returns the stored value, anything else computes."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pytest_gpuperf.util import memo


def test_a_second_call_reads_the_stored_value(tmp_path):
    calls = []
    compute = lambda: calls.append(1) or {"x": np.float64(1.5), "v": np.arange(2)}  # noqa: E731
    v1, how1 = memo.remember("t", {"a": 1}, compute, root=tmp_path)
    v2, how2 = memo.remember("t", {"a": 1}, compute, root=tmp_path)
    assert calls == [1] and v1 == v2 == {"x": 1.5, "v": [0, 1]}
    assert (how1["cached"], how2["cached"]) == (False, True) and how1["key"] == how2["key"]


def test_other_inputs_are_another_key(tmp_path):
    assert memo.key("t", {"a": 1}) != memo.key("t", {"a": 2}) != memo.key("u", {"a": 2})


@pytest.mark.parametrize("text", ["{\"schema\": \"pytest-gpuperf-memo/1\", \"key\"", json.dumps({"schema": "other/9"})])
def test_a_torn_or_foreign_entry_is_computed_again(tmp_path, text):
    k = memo.key("t", {"a": 1})
    (tmp_path / "memo").mkdir()
    (tmp_path / "memo" / f"{k}.json").write_text(text)
    value, how = memo.remember("t", {"a": 1}, lambda: 7, root=tmp_path)
    assert (value, how["cached"]) == (7, False)
    assert memo.remember("t", {"a": 1}, lambda: 8, root=tmp_path)[0] == 7  # rewritten whole


def test_an_unwritable_store_still_returns_the_value(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    value, how = memo.remember("t", {"a": 1}, lambda: 3, root=blocker)
    assert value == 3 and how["cached"] is False and how["why"].startswith("not stored")


def test_a_value_json_cannot_keep_is_refused(tmp_path):
    with pytest.raises(TypeError, match="JSON cannot keep"):
        memo.remember("t", {"a": 1}, lambda: {"s": {1, 2}}, root=tmp_path)


def test_the_environment_moves_the_store(monkeypatch, tmp_path):
    monkeypatch.setenv(memo.ENV, str(tmp_path))
    assert memo.cache_root() == tmp_path


def test_a_stored_value_the_check_refuses_is_computed_again_and_replaced(tmp_path):
    memo.remember("t", {"a": 1}, lambda: {"out": 1}, root=tmp_path)
    value, how = memo.remember("t", {"a": 1}, lambda: {"out": 2}, root=tmp_path, valid=lambda v: v["out"] == 2)
    assert (value, how["cached"], how.get("refused")) == ({"out": 2}, False, True)
    value, how = memo.remember("t", {"a": 1}, lambda: {"out": 3}, root=tmp_path, valid=lambda v: v["out"] == 2)
    assert (value, how["cached"]) == ({"out": 2}, True)  # the replacement is what the next run reads
