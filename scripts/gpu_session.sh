#!/usr/bin/env bash
# One whole GPU session on an H100 host without network (run on a GPU host without network, from the repo root, with
# `.whl` carried): install the carried wheels, register NVIDIA's OpenCL ICD, then run the suites on
# CUDA and on NVIDIA OpenCL, writing results JSON, baselines and logs under $OUT.
#
#   GPUPERF_SUITES   suites to run (default: pytest_gpuperf/suites/)
#   GPUPERF_ARGS     extra pytest arguments (e.g. --gpuperf-update-baselines)
#   GPUPERF_DEVICES  devices to run (default: "cuda:0 opencl:0")
#   GPUPERF_PRE      optional command run after set-up (e.g. a probe script)
#   GPUPERF_HISTORY  history store every run is recorded in (default: $W/results/history.db, packed
#                    with the session; import its results into results/history.db with 'gpuperf history import')
#   GPUPERF_TAG      optional prefix of the results/log names (results/<key>/<tag>-<backend>.json),
#                    so runs of different suites do not overwrite each other's results
set -uo pipefail
# Few files come back from a GPU host, so everything is written under $W and packed
# into $OUT/session.tgz at the end (fetch_gpu_session.sh unpacks it into results/ and baselines/).
OUT=${OUT:-/tmp/gpuperf-out}
W=/tmp/gp
# A warm machine keeps /tmp between calls, but $OUT starts empty each call: start a fresh $W unless an
# earlier invocation in this same call already packed its session (then add to it).
[ -e "$OUT/session.tgz" ] || rm -rf "$W"
mkdir -p "$OUT" "$W/logs" "$W/results"
[ -d "$W/baselines" ] || cp -r baselines "$W/baselines"
trap 'tar czf "$OUT/session.tgz" -C "$W" . ; ls -la "$OUT"' EXIT
source scripts/gpu_env.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu --format=csv \
  | tee "$W/logs/nvidia-smi.txt"
python3 -m pytest -p pytest_gpuperf.plugin --gpuperf-list-devices -p no:cacheprovider 2>&1 | tee "$W/logs/devices.txt"
if [ -n "${GPUPERF_PRE:-}" ]; then bash -c "$GPUPERF_PRE"; fi
rc=0
for dev in ${GPUPERF_DEVICES:-cuda:0 opencl:0}; do
  tag=${GPUPERF_TAG:+$GPUPERF_TAG-}${dev/:/}
  timeout ${GPUPERF_TIMEOUT:-280} python3 -m pytest -p pytest_gpuperf.plugin -p no:cacheprovider -q -rs \
    --gpuperf-device="$dev" --gpuperf-baseline-dir="$W/baselines" \
    --gpuperf-json="$W/results/{key}/${GPUPERF_TAG:+$GPUPERF_TAG-}{backend}.json" \
    --gpuperf-history="${GPUPERF_HISTORY:-$W/results/history.db}" \
    ${GPUPERF_ARGS:-} ${GPUPERF_SUITES:-pytest_gpuperf/suites/} 2>&1 | tee "$W/logs/$tag.log" | tail -60
  rc=$(( rc | ${PIPESTATUS[0]} ))
done
exit $rc
