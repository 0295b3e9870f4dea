"""NVRTC output kept across runs (``devices.cubin_cache``): a second compile of the same text, name, options,
target and NVRTC version is replayed byte for byte; any change of one is a miss; a compile error is never
stored; a torn entry is compiled again. The NVRTC case compiles for real (CI installs NVRTC, no GPU needed)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from nvrtc_support import nvrtc_env
from pytest_gpuperf.devices import cubin_cache

ROOT = Path(__file__).resolve().parents[1]


def test_a_second_compile_is_replayed_and_any_changed_part_is_a_miss(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUPERF_CACHE", str(tmp_path))
    calls: list[str] = []

    def compile_as(text: str):
        def once() -> tuple[bytes, str]:
            calls.append(text)
            return bytes(range(256)) + text.encode(), f"log of {text}"
        return once

    first = cubin_cache.compiled("src", "k", ["-arch=sm_90"], "cubin", "13.0", compile_as("a"))
    again = cubin_cache.compiled("src", "k", ["-arch=sm_90"], "cubin", "13.0", compile_as("b"))
    assert first == (bytes(range(256)) + b"a", "log of a", False) and again == (first[0], first[1], True)
    for change in (("src2", "k", ["-arch=sm_90"], "cubin", "13.0"), ("src", "k2", ["-arch=sm_90"], "cubin", "13.0"),
                   ("src", "k", ["-arch=sm_80"], "cubin", "13.0"), ("src", "k", ["-arch=sm_90"], "ptx", "13.0"),
                   ("src", "k", ["-arch=sm_90"], "cubin", "13.1")):
        assert cubin_cache.compiled(*change, compile_as("c"))[2] is False
    assert calls == ["a"] + ["c"] * 5


def test_a_compile_error_is_never_stored_and_a_torn_entry_compiles_again(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUPERF_CACHE", str(tmp_path))

    def broken() -> tuple[bytes, str]:
        raise RuntimeError("error: identifier undefined")

    for _ in range(2):
        with pytest.raises(RuntimeError, match="undefined"):
            cubin_cache.compiled("bad", "k", [], "cubin", "13.0", broken)
    assert cubin_cache.compiled("ok", "k", [], "cubin", "13.0", lambda: (b"\x7fELF", ""))[2] is False
    (entry,) = (tmp_path / "memo").glob("nvrtc-*.json")
    entry.write_text(entry.read_text()[:20])
    assert cubin_cache.compiled("ok", "k", [], "cubin", "13.0", lambda: (b"\x7fELF", ""))[:3] == (b"\x7fELF", "", False)


def test_nvrtc_output_is_replayed_byte_for_byte(tmp_path):
    env = {**nvrtc_env(), "GPUPERF_CACHE": str(tmp_path)}
    script = textwrap.dedent("""
        from pytest_gpuperf.devices import cubin_cache, recompile
        src = 'extern "C" __global__ void twice(float* x) { x[threadIdx.x] *= 2.0f; }'
        opts = recompile.nvrtc_options("90", [], "cubin")
        direct = recompile.compile_cubin(src, opts)[0]
        made = cubin_cache.compiled(src, "twice", opts, "cubin", "13.0", lambda: (recompile.compile_cubin(src, opts)[0], ""))
        replayed = cubin_cache.compiled(src, "twice", opts, "cubin", "13.0", lambda: (b"never", ""))
        assert made[2] is False and replayed[2] is True
        assert made[0] == replayed[0] == direct and direct[:4] == b"\\x7fELF", (len(direct), direct[:4])
        print("ok", len(direct))
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=ROOT,
                         timeout=300)
    assert out.returncode == 0 and out.stdout.startswith("ok"), out.stdout + out.stderr
