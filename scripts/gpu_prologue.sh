# Sourced first by the GPU session scripts (from the repo root): the output folder the device tool
# brings back ($OUT, packed as session.tgz on exit), a clean work folder ($W with logs/ and results/),
# the environment (scripts/gpu_env.sh) and the card's state as nvidia-smi reports it before any run.
OUT=${OUT:-/tmp/gpuperf-out}
W=/tmp/gp
rm -rf "$W"; mkdir -p "$OUT" "$W/logs" "$W/results"
trap 'tar czf "$OUT/session.tgz" -C "$W" . ; ls -la "$OUT"' EXIT
source scripts/gpu_env.sh
nvidia-smi --query-gpu=name,uuid,serial,pci.bus_id,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,power.limit,temperature.gpu,clocks_event_reasons.active \
  --format=csv | tee "$W/logs/nvidia-smi-$(date -u +%Y%m%dT%H%M%S).txt"  # one file per call: a fetch never overwrites one
