# Sourced first by the GPU session scripts (from the repo root): the output folder brought back
# from the GPU host ($OUT, packed as session.tgz on exit), a clean work folder ($W with logs/ and results/),
# the environment (scripts/gpu_env.sh) and the card's state as nvidia-smi reports it before any run.
OUT=${OUT:-/tmp/gpuperf-out}
W=/tmp/gp
rm -rf "$W"; mkdir -p "$OUT" "$W/logs" "$W/results"
trap 'tar czf "$OUT/session.tgz" -C "$W" . ; ls -la "$OUT"' EXIT
source scripts/gpu_env.sh
# the commit this call runs: set by hand, else the stamp scripts/device_tree.sh slim left in the tree
if [ -z "${GPUPERF_COMMIT:-}" ] && [ -f .gpuperf-commit ]; then export GPUPERF_COMMIT=$(cat .gpuperf-commit); fi
[ -n "${GPUPERF_COMMIT:-}" ] || echo "WARNING: no GPUPERF_COMMIT and no .gpuperf-commit: results will name the device copy's stale .git" >&2
nvidia-smi --query-gpu=name,uuid,serial,pci.bus_id,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,power.limit,temperature.gpu,clocks_event_reasons.active \
  --format=csv | tee "$W/logs/nvidia-smi-$(date -u +%Y%m%dT%H%M%S).txt"  # one file per call: a fetch never overwrites one
