#!/usr/bin/env bash
# The README's main command on a lent GPU: the runs a baseline is made from, and the gate check
# against it — one session each (a run of pytest_gpuperf/suites/ takes ~5.5 minutes on an H100, a call at most 10).
# Run on a GPU host without network, from the repo root, carrying .whl, after `bash scripts/device_tree.sh slim`
# (it stamps the commit in .gpuperf-commit: the device copy's .git is stale; GPUPERF_COMMIT overrides it):
#   GPUPERF_COMMIT=<sha> GPUPERF_TAG=default-1 bash scripts/gpu_default_session.sh            # one run
#   GPUPERF_COMMIT=<sha> GPUPERF_GATECHECK="--aa 1" bash scripts/gpu_default_session.sh       # gate check
#   GPUPERF_SUITES="pytest_gpuperf/suites/test_power.py ..."   one part of pytest_gpuperf/suites/ per call, where the whole command outlasts
#     a session (~12 min on an H100 since the power and precision suites): no metric's value depends on
#     which files run beside it; baselines take the parts' files together (from-results A-1 B-1 A-2 B-2)
#     (GPUPERF_GATECHECK: arguments of `gpuperf-baseline gatecheck`; the runs are appended to the
#      checkout's results/<key>/gatecheck.json, so several calls accumulate)
# Back here: bash scripts/fetch_gpu_session.sh OUT_DIR   (results/<key>/, logs, gatecheck runs)
# then, after two runs:  gpuperf-baseline from-results results/<key>/default-{1,2}-cuda.json
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/gpu_prologue.sh
key=$(python3 -c "from pytest_gpuperf.devices import discover, resolve; print(resolve('0', discover())[0].key)")
mkdir -p "$W/results/$key"
if [ -n "${GPUPERF_GATECHECK:-}" ]; then
  [ -f "results/$key/gatecheck.json" ] && cp "results/$key/gatecheck.json" "$W/results/$key/"
  mkdir -p "$W/results/$key/gatecheck"
  cp results/"$key"/gatecheck/*.json results/"$key"/gatecheck/*.log "$W/results/$key/gatecheck/" 2>/dev/null
  python3 -m pytest_gpuperf.baselines.cli gatecheck --append --commit "${GPUPERF_COMMIT:?}" \
    --results-dir "$W/results/$key" --out "$W/results/$key/gatecheck.json" ${GPUPERF_GATECHECK} 2>&1 \
    | tee "$W/logs/gatecheck-$(date +%H%M%S).log"
  exit "${PIPESTATUS[0]}"
fi
tag=${GPUPERF_TAG:?set GPUPERF_TAG (e.g. default-1) or GPUPERF_GATECHECK}
# the README's main command, plus --gpuperf-json to keep its results; SIGINT at the limit lets pytest
# finish its session, so the results of the tests that ran are still written
timeout -s INT -k 30 "${GPUPERF_TIMEOUT:-540}" python3 -m pytest -p pytest_gpuperf.plugin -p no:cacheprovider -q -rs \
  --gpuperf-device=0 ${GPUPERF_SUITES:-pytest_gpuperf/suites/} --gpuperf-json="$W/results/$key/$tag-{backend}.json" ${GPUPERF_ARGS:-} 2>&1 \
  | tee "$W/logs/$tag.log" | tail -40
exit "${PIPESTATUS[0]}"
