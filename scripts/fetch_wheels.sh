#!/usr/bin/env bash
# Download the wheels a GPU host without network lacks (PyOpenCL and its needs, gmpy2, Kernel Tuner's
# pure-Python needs) into .whl/, which scripts/gpu_session.sh installs there. Run on this machine.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf .whl && mkdir -p .whl
plat=(--platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64
      --platform manylinux2014_x86_64 --platform manylinux1_x86_64 --platform manylinux_2_24_x86_64
      --platform manylinux_2_34_x86_64 --platform any)
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  "${plat[@]}" -d .whl pyopencl pytools platformdirs siphash24 gmpy2 kernel_tuner \
  hypothesis mpmath sortedcontainers python-constraint2 xmltodict jsonschema jsonschema-specifications referencing rpds-py attrs \
  nvidia-ml-py
# issue 16's power model: xgboost-cpu (the CPU-only build, small enough to carry; the full xgboost wheel
# bundles CUDA and NCCL). Without it models.power falls back to scikit-learn's HistGradientBoostingRegressor.
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  "${plat[@]}" -d .whl xgboost-cpu || echo "xgboost-cpu not fetched: the power model will use HistGradientBoosting"
ls -la .whl
