"""The project's worst-case search is kept across runs and spot-checked: a later run evaluates the stored worst
inputs on the device again and reuses the search only when every output bit is the same."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pytest_gpuperf.accuracy import search_check


@pytest.fixture
def store(monkeypatch, tmp_path):
    monkeypatch.setenv("GPUPERF_CACHE", str(tmp_path))
    return tmp_path


def _search(device):
    out = search_check.search_function(device, "sin", np.random.default_rng(3), 3)
    (record,) = out.records
    return record


def test_a_second_run_reuses_the_search_after_its_spot_check(cl_device, store):
    first = _search(cl_device)
    again = _search(cl_device)
    assert first["info"]["stored"]["cached"] is False and again["info"]["stored"]["cached"] is True
    assert again["info"]["stored"]["spot_checked"] == 32
    assert again["value"] == first["value"] and again["info"]["worst"] == first["info"]["worst"]
    assert again["identity"] == first["identity"]


def test_a_device_whose_outputs_moved_is_searched_again(cl_device, store):
    _search(cl_device)
    (path,) = (store / "memo").glob("accuracy-search-*.json")
    entry = json.loads(path.read_text())
    entry["value"]["y"][0] ^= 1  # one output bit the device no longer gives: a new driver's math behaves so
    path.write_text(json.dumps(entry))
    again = _search(cl_device)
    assert again["info"]["stored"]["cached"] is False
    assert json.loads(path.read_text())["value"]["y"] != entry["value"]["y"]  # replaced by the new search
