"""pytest-gpuperf: benchmark GPUs from pytest and gate regressions against reviewed baselines.

The plugin module (:mod:`pytest_gpuperf.plugin`) only wires the pieces below into pytest (their layers:
CONTRIBUTING.md, "Layers"):

* :mod:`pytest_gpuperf.devices` — real CUDA (CuPy/NVRTC) and OpenCL (PyOpenCL) backends.
* :mod:`pytest_gpuperf.timing` — the single statistical timing path every suite uses.
* :mod:`pytest_gpuperf.baselines` — reviewed expectations per device model and the verdicts.
* :mod:`pytest_gpuperf.report` — the results JSON, the terminal summary and GitHub Actions annotations.
* :mod:`pytest_gpuperf.history` — every run in a history store, change points, the dashboard.
* :mod:`pytest_gpuperf.compare` — run against run (``gpuperf compare``, ``--gpuperf-compare``): the upgrade gate.
* :mod:`pytest_gpuperf.schemas` — the versioned JSON Schemas of results, baselines and the measurement caches.
* :mod:`pytest_gpuperf.api` — tune, predict and check users' own kernels outside pytest.
"""

__version__ = "0.1.0"
RESULTS_SCHEMA = "pytest-gpuperf/1"
BASELINE_SCHEMA = "pytest-gpuperf-baseline/1"  # the expanded form code works on (and older files)
LEAN_BASELINE_SCHEMA = "pytest-gpuperf-baseline/2"  # the lean form baseline files are written in
TUNING_CACHE_SCHEMA = "pytest-gpuperf-tuning/1"
NCU_REFERENCE_SCHEMA = "pytest-gpuperf-ncu-reference/1"
COMPARE_SCHEMA = "pytest-gpuperf-compare/1"
SIBLINGS_SCHEMA = "pytest-gpuperf-siblings/1"
FLEET_SCHEMA = "pytest-gpuperf-fleet/1"  # gpuperf fleet report --format json
FLEET_COMPARE_SCHEMA = "pytest-gpuperf-fleet-compare/1"  # gpuperf fleet compare --format json
