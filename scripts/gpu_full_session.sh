#!/usr/bin/env bash
# Suite groups on a GPU host without network: one results file per group and backend
# (results/<key>/<group>[SUFFIX]-<backend>.json), logs, and the baselines as the run left them.
# All five groups take about 10 minutes, more than one session may run, so a session is two calls:
# GPUPERF_GROUPS="memory probes accuracy" (~4 min) and GPUPERF_GROUPS="models tuning" (~6 min).
# Run on a GPU host without network, from the repo root, carrying .whl (pass the sha read here: the device
# copy's .git may be stale):
#   GPUPERF_COMMIT=<sha> [GPUPERF_SUFFIX=-r2] [GPUPERF_GROUPS="memory probes"] [GPUPERF_ARGS=...] \
#     bash scripts/gpu_full_session.sh
# then here: bash scripts/fetch_gpu_session.sh OUT_DIR. GPUPERF_ARGS=--gpuperf-update-baselines
# writes baselines from this run; without it the run is a gate check against baselines/.
set -uo pipefail
cd "$(dirname "$0")/.."
suffix=${GPUPERF_SUFFIX:-}
extra=${GPUPERF_ARGS:-}
rc=0
group() {  # name, suites, devices, per-backend timeout (s), extra pytest args
  case " ${GPUPERF_GROUPS:-memory probes accuracy models tuning} " in *" $1 "*) ;; *) return 0;; esac
  GPUPERF_TAG="$1$suffix" GPUPERF_SUITES="$2" GPUPERF_DEVICES="$3" GPUPERF_TIMEOUT="$4" \
    GPUPERF_ARGS="$extra $5" bash scripts/gpu_session.sh || rc=1
}
group memory   "pytest_gpuperf/suites/test_memory.py"                                 "cuda:0 opencl:0" 60  ""
group probes   "pytest_gpuperf/suites/test_latency.py pytest_gpuperf/suites/test_memory_hierarchy.py" "cuda:0 opencl:0" 140 ""
group accuracy "pytest_gpuperf/suites/test_accuracy_ops.py pytest_gpuperf/suites/test_accuracy_math.py pytest_gpuperf/suites/test_accuracy_fuzz.py pytest_gpuperf/suites/test_accuracy_sum.py" \
               "cuda:0 opencl:0" 120 "--gpuperf-exhaustive --gpuperf-accuracy-scale=4 --gpuperf-accuracy-budget=72"
group models   "pytest_gpuperf/suites/test_model_error.py pytest_gpuperf/suites/test_kernel_classes.py" "cuda:0 opencl:0" 280 ""
group tuning   "pytest_gpuperf/suites/test_workgroup_tuning.py"                       "cuda:0 opencl:0" 180 ""
exit $rc
