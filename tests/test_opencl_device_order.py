"""``opencl:N`` numbers the host's OpenCL devices flat over its platforms with every GPU or accelerator before the
CPUs, each group in the platforms' order, so that on a host with NVIDIA's OpenCL beside PoCL ``opencl:0`` is the GPU
whatever order the ICD loader read its vendor files in. Checked on the host's real PoCL devices (CPUs only here:
the order among CPUs is kept, and the numbering ``discover`` gives is the one ``open_device`` opens)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_gpuperf.devices import discover

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(not any(d.backend == "opencl" for d in discover().devices),
                                reason="no OpenCL device (install pocl-opencl-icd)")

PROBE = """
import json
import pyopencl as cl
from pytest_gpuperf.devices import discover, open_device, resolve
from pytest_gpuperf.devices import opencl as ocl
pairs = ocl._all_cl_devices()
raw = [(p.name, d.name, int(d.type)) for p in cl.get_platforms() for d in p.get_devices()]
again = ocl.gpus_first(list(reversed(pairs)))
inv = discover()
infos = [d for d in inv.devices if d.backend == "opencl"]
opened = [open_device(resolve(d.spec, inv)[0]) for d in infos]
print(json.dumps({"order": [(p.name, d.name, int(d.type)) for p, d in pairs], "raw": raw,
                  "reversed": [(p.name, d.name) for p, d in again], "cpu": int(cl.device_type.CPU),
                  "specs": [d.spec for d in infos], "names": [d.name for d in infos],
                  "opened": [o.info.name for o in opened]}))
"""


def _probe(devices: str) -> dict:
    env = {**os.environ, "POCL_DEVICES": devices, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_cpu_devices_keep_the_platforms_order_and_follow_any_other_device():
    got = _probe("basic pthread")
    order, cpu = got["order"], got["cpu"]
    assert len(order) >= 2 and [o[:2] for o in order] == sorted(
        [r[:2] for r in got["raw"]], key=lambda r: bool(next(x[2] for x in got["raw"] if x[:2] == r) & cpu))
    kinds = [bool(t & cpu) for _, _, t in order]
    assert kinds == sorted(kinds)  # no CPU before a device that is not one
    assert got["reversed"] == [o[:2] for o in reversed(order)]  # among CPUs the order given is kept
    assert got["specs"] == [f"opencl:{i}" for i in range(len(order))] and got["names"] == [o[1].strip() for o in order]
    assert got["opened"] == got["names"]  # opencl:N opens the device discover numbered N
