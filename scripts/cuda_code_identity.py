#!/usr/bin/env python3
"""Show that a change of kernel *text* leaves the CUDA machine code the baselines timed unchanged —
without a GPU.

Every CUDA kernel built through the language prelude (``devices.dialect.portable``: the tuning benchmarks
at two work-group shapes each and their workload-transformed variants, the λ0 micro-benchmark, the model
corpora, the kernel classes, the quantization kernels) is compiled with NVRTC for sm_90 with the options
the suites pass, and each entry point's code (``.text.<name>`` of the cubin) is kept. Run ``save`` on the
old tree and ``compare`` on the new one:

    pip install --target /tmp/nvrtc-site nvidia-cuda-nvrtc==13.0.*     # NVRTC of the saved runs' toolkit
    PYTHONPATH=/tmp/nvrtc-site python scripts/cuda_code_identity.py save /tmp/before.pkl   # old tree
    PYTHONPATH=/tmp/nvrtc-site python scripts/cuda_code_identity.py compare /tmp/before.pkl  # new tree

``compare`` exits 1 when any kernel's machine code differs (or fails to compile on one side only). On a
tree older than this script, build the "before" pickle from that tree's own modules with the same case
list (how results/offline/cuda-code-identity.txt.gz was made for the prelude change).
"""

from __future__ import annotations

import pickle
import re
import sys

from pytest_gpuperf.devices import elf, recompile
from pytest_gpuperf.devices.dialect import portable
from pytest_gpuperf.corpora import corpus, kernel_classes
from pytest_gpuperf.precision import quant_kernels
from pytest_gpuperf.tuning import concurrency, workload
from pytest_gpuperf.tuning import kernels as tk


def cases() -> list[tuple[str, str, list[str], list[str]]]:
    """(name, CUDA text, NVRTC options, entry points) of every prelude-built kernel the suites time."""
    out = []
    for b in tk.BENCHMARKS:
        for loc in ([(256,), (64,)] if b.dims == 1 else [(16, 16), (32, 4)]):
            out.append((f"tuning.{b.name}.{loc}", portable(b.source, "cuda"), list(b.options(loc)), [b.kernel]))
        if b.dims == 1 and b.groups is not None:
            out.append((f"tuning.{b.name}.wl", portable(workload.transform(b.source, 32, 4), "cuda"),
                        list(b.options((32,))), [b.kernel]))
    out.append(("tuning.micro", portable(concurrency.MICRO, "cuda"), [], ["lambda_micro"]))
    out += [(f"corpus.{k.name}", k.source("cuda"), [], [k.name]) for k in corpus.CORPUS]
    out += [(f"classes.{n}", kernel_classes.source(n, "cuda"), [], [n]) for n in kernel_classes.SOURCES]
    out.append(("quant", quant_kernels.source("cuda"), [], re.findall(r"KERNEL void (\w+)", quant_kernels.BODY)))
    return out


def build() -> dict[str, tuple[str, object]]:
    res: dict[str, tuple[str, object]] = {}
    for name, src, opts, entries in cases():
        try:
            cubin = recompile.compile_cubin(src, ["-arch=sm_90", "-std=c++17", *opts])[0]
        except Exception as exc:  # noqa: BLE001 - a compile error is a result to compare too
            res[name] = ("error", str(exc)[:300])
            continue
        res[name] = ("ok", {e: elf.function_code(cubin, e) for e in entries})
    return res


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("save", "compare"):
        print(__doc__, file=sys.stderr)
        return 2
    mode, path = argv
    now = build()
    if mode == "save":
        with open(path, "wb") as fh:
            pickle.dump(now, fh)
        print(f"{len(now)} kernel builds saved ({sum(r[0] == 'error' for r in now.values())} compile errors)")
        return 0
    with open(path, "rb") as fh:
        before = pickle.load(fh)
    differ = [n for n in sorted(set(now) | set(before)) if now.get(n) != before.get(n)]
    for n in differ:
        print(f"DIFFERS: {n}")
    print(f"{len(now) - len(differ)} of {len(now)} kernel builds have byte-identical machine code")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
