"""The cause of a CuPy finding (accuracy/findings.py): CuPy's -ftz=true turns libdevice's binary64 log's
zero test of the argument's high word into a flushing binary32 compare, which is why CuPy's fp64 log,
log2 and log10 return -inf for negative subnormals where the project's build returns NaN. NVRTC shows
it without a GPU: the two PTX texts differ in that one compare. Runs in a subprocess with the NVRTC of
``GPUPERF_NVRTC_DIR`` (.ci/run installs it), as tests/test_cuda_compile.py does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from nvrtc_support import nvrtc_env

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = r'''
import difflib, json
from pytest_gpuperf.devices import recompile
src = 'extern "C" __global__ void k(const double* x, double* y){ int i = threadIdx.x; y[i] = %s(x[i]); }'
out = {}
for fn in ("log", "log2", "log10"):
    a, _ = recompile.compile_ptx(src % fn, ["-arch=compute_90"])
    b, _ = recompile.compile_ptx(src % fn, ["-arch=compute_90", "-ftz=true"])
    d = [l for l in difflib.unified_diff(a.decode().splitlines(), b.decode().splitlines(), lineterm="", n=0)
         if l[:1] in "+-" and not l.startswith(("+++", "---"))]
    out[fn] = d
print(json.dumps(out))
'''


def test_cupy_ftz_flushes_the_fp64_log_zero_test():
    env = nvrtc_env()
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, cwd=ROOT,
                         timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    import json
    diffs = json.loads(out.stdout.strip().splitlines()[-1])
    for fn, d in diffs.items():
        removed = [l for l in d if l.startswith("-")]
        added = [l for l in d if l.startswith("+")]
        # every difference -ftz=true makes is a binary32 zero compare becoming its flushing form
        assert removed and len(removed) == len(added), (fn, d)
        for r, a in zip(removed, added):
            assert "setp.eq.f32" in r and "setp.eq.ftz.f32" in a and "0f00000000" in r, (fn, d)
            assert r.replace("setp.eq.f32", "setp.eq.ftz.f32")[1:] == a[1:], (fn, d)
