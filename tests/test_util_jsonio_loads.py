"""``jsonio.loads``: ``json.loads`` with the cyclic collector paused while it parses, left as the caller had it."""

import gc
import json

import pytest

from pytest_gpuperf.util import jsonio

TEXT = '{"metrics": [{"name": "a", "value": 1.5, "samples": [1, 2]}], "n": null}'


def test_the_collector_is_paused_while_parsing_then_left_as_it_was():
    seen = []
    assert jsonio.loads(TEXT, object_pairs_hook=lambda kv: seen.append(gc.isenabled()) or dict(kv)) == json.loads(TEXT)
    assert seen and not any(seen) and gc.isenabled()
    with pytest.raises(json.JSONDecodeError):
        jsonio.loads('{"metrics": [')
    assert gc.isenabled()
    gc.disable()
    try:
        assert jsonio.loads(TEXT) == json.loads(TEXT) and not gc.isenabled()
    finally:
        gc.enable()
