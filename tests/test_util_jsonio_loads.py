"""``jsonio.loads``: ``json.loads`` with the cyclic collector paused during the parse, and the collector left as
the caller had it afterwards, whether the text parsed or not."""

from __future__ import annotations

import gc
import json

import pytest

from pytest_gpuperf.util import jsonio

TEXT = '{"metrics": [{"name": "a", "value": 1.5, "samples": [1, 2, 3]}], "run": {"started": "x"}, "n": null}'


def test_loads_is_json_loads_with_the_collector_paused_then_back_on():
    seen = []

    def pairs(items):
        seen.append(gc.isenabled())
        return dict(items)

    assert gc.isenabled()
    assert jsonio.loads(TEXT) == json.loads(TEXT)
    assert jsonio.loads(TEXT, object_pairs_hook=pairs) == json.loads(TEXT)
    assert seen and not any(seen)  # paused while the objects were made
    assert gc.isenabled()


def test_a_failed_parse_leaves_the_collector_on_and_a_paused_one_paused():
    with pytest.raises(json.JSONDecodeError):
        jsonio.loads('{"metrics": [')
    assert gc.isenabled()
    gc.disable()
    try:
        assert jsonio.loads(TEXT) == json.loads(TEXT)
        assert not gc.isenabled()  # the caller's choice stands
    finally:
        gc.enable()


def test_read_json_parses_through_it(tmp_path):
    path = tmp_path / "r.json"
    path.write_text(TEXT)
    assert jsonio.read_json(path) == json.loads(TEXT) and gc.isenabled()
