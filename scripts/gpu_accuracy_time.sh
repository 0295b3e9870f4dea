#!/usr/bin/env bash
# The accuracy group on a lent GPU, timed: how long the exhaustive certificates (every unary binary32
# function and CUDA intrinsic over all its inputs, with the mean over every input) and the rest of the
# accuracy suites take with the README's defaults, and whether two unchanged runs agree exactly.
# Run on a GPU host without network, from the repo root, carrying .whl (one call, < 3 minutes on an H100):
#   bash scripts/gpu_accuracy_time.sh
# Writes under $OUT: run-{1,2}.json (results of the math suite's two runs), accuracy.json (the other
# accuracy suites), durations-*.log (pytest --durations), sweep-time.txt (each certificate's device
# time from info.certificate.device_s, and their total), repeat.txt (metrics of run 2 that differ from run 1).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/gpuperf-out}
mkdir -p "$OUT"
source scripts/gpu_env.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv | tee "$OUT/nvidia-smi.txt"
P=(python3 -m pytest -p pytest_gpuperf.plugin -p no:cacheprovider -q -rs --durations=15 --gpuperf-device=0
   --gpuperf-baseline-dir="$OUT/bl")
# a soft time box (--gpuperf-accuracy-budget: later tests skip with the reason, results are still
# written) inside a hard one, so the three runs end within ~3 minutes whatever happens
for i in 1 2; do
  t0=$SECONDS
  timeout 70 "${P[@]}" pytest_gpuperf/suites/test_accuracy_math.py --gpuperf-accuracy-budget=50 \
    --gpuperf-json="$OUT/run-$i.json" > "$OUT/durations-math-$i.log" 2>&1
  echo "math suite run $i: $((SECONDS - t0)) s wall (exit $?)"; tail -2 "$OUT/durations-math-$i.log"
done
t0=$SECONDS
timeout 50 "${P[@]}" pytest_gpuperf/suites/test_accuracy_ops.py pytest_gpuperf/suites/test_accuracy_fuzz.py pytest_gpuperf/suites/test_accuracy_sum.py \
  --gpuperf-accuracy-budget=35 --gpuperf-json="$OUT/accuracy.json" > "$OUT/durations-other.log" 2>&1
echo "ops+fuzz+sum suites: $((SECONDS - t0)) s wall"; tail -2 "$OUT/durations-other.log"
python3 - "$OUT" <<'EOF' | tee "$OUT/sweep-time.txt"
import json, sys
out = sys.argv[1]
runs = [{m["name"]: m for m in json.load(open(f"{out}/run-{i}.json"))["metrics"]} for i in (1, 2)]
tot = 0.0
for name, m in sorted(runs[0].items()):
    c = m.get("info", {}).get("certificate")
    if c:
        tot += c["device_s"]
        print(f"{name:40s} {c['device_s']:.4f} s  checked {c['checked']}  max {m['value']}")
print(f"certificates: {sum(1 for m in runs[0].values() if m.get('info', {}).get('certificate'))}, "
      f"device time {tot:.3f} s")
diff = [n for n, m in runs[0].items() if n in runs[1] and m["value"] != runs[1][n]["value"]]
open(f"{out}/repeat.txt", "w").write("\n".join(diff) + "\n")
print(f"math metrics differing between two unchanged runs: {len(diff)} {diff[:10]}")
EOF
