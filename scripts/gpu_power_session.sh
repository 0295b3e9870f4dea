#!/usr/bin/env bash
# Issue 16 on an NVIDIA GPU host without network, one session (≤ 10 minutes): collect (or resume) the static power
# model's corpus, then run the power suite (energy per op and watts, model.power.* on the corpus).
# Run on a GPU host without network, from the repo root, carrying .whl (scripts/fetch_wheels.sh):
#   GPUPERF_TAG=power-1 bash scripts/gpu_power_session.sh
#   GPUPERF_CORPUS_S   seconds of corpus collection this call (default 150; 0 skips it). The corpus is
#                      results/<key>/power-corpus-cuda.json in the checkout: commit it (or leave it
#                      untracked) and the next call resumes where this one stopped.
#   GPUPERF_PARETO=1   also run the time–energy Pareto searches (every configuration timed, energies fastest first
#                      until the idle-power bound or GPUPERF_PARETO_BUDGET_S, default 45 s per kernel) — best in a
#                      call of their own: GPUPERF_CORPUS_S=0 GPUPERF_PARETO=1 GPUPERF_TIMEOUT=540 GPUPERF_K=pareto
#   GPUPERF_K          the suite's -k expression (default "not pareto"; all tests with GPUPERF_PARETO=1), e.g.
#                      GPUPERF_K="pareto and (blur1d or nbody)" to spread the twelve searches over calls
#   GPUPERF_SUITE=0    corpus only (with e.g. GPUPERF_CORPUS_S=480)
#   GPUPERF_TIMEOUT    seconds for the suite (default 330); tests that would start in its last 40 s are
#                      skipped with the reason (--gpuperf-tuning-budget), so the results file is written
#   GPUPERF_ARGS       extra pytest arguments (e.g. --gpuperf-update-baselines)
# Back here: bash scripts/fetch_gpu_session.sh OUT_DIR, then copy power-corpus-cuda.json from the
# session into results/<key>/. Baselines need two runs: gpuperf-baseline from-results results/<key>/power-{1,2}-cuda.json
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/gpu_prologue.sh
key=$(python3 -c "from pytest_gpuperf.devices import discover, resolve; print(resolve('cuda:0', discover())[0].key)")
mkdir -p "$W/results/$key" "results/$key"
tag=${GPUPERF_TAG:-power}
rc=0
if [ "${GPUPERF_CORPUS_S:-150}" != "0" ]; then
  timeout $(( ${GPUPERF_CORPUS_S:-150} + 60 )) python3 -m pytest_gpuperf.power.collect --device cuda:0 \
    --budget-s "${GPUPERF_CORPUS_S:-150}" --out "results/$key/power-corpus-cuda.json" 2>&1 \
    | tee "$W/logs/$tag-corpus.log" | tail -15
  rc=${PIPESTATUS[0]}
  cp "results/$key/power-corpus-cuda.json" "$W/results/$key/" 2>/dev/null
fi
[ "${GPUPERF_SUITE:-1}" = "0" ] && exit "$rc"  # corpus-only call
sel="not pareto"
[ -n "${GPUPERF_PARETO:-}" ] && sel="" && GPUPERF_ARGS="${GPUPERF_ARGS:-} --gpuperf-energy-pareto"
[ -n "${GPUPERF_PARETO_BUDGET_S:-}" ] && GPUPERF_ARGS="${GPUPERF_ARGS:-} --gpuperf-pareto-budget=$GPUPERF_PARETO_BUDGET_S"
sel=${GPUPERF_K:-$sel}  # a -k expression of its own, e.g. the Pareto searches of some kernels only
# the suite skips (with the reason) tests that would start after its budget, so it ends with its results file
limit=${GPUPERF_TIMEOUT:-330}
timeout -s INT -k 30 "$limit" python3 -m pytest -p pytest_gpuperf.plugin -p no:cacheprovider -q -rs \
  --gpuperf-device=cuda:0 pytest_gpuperf/suites/test_power.py ${sel:+-k "$sel"} --gpuperf-tuning-budget=$(( limit - 40 )) \
  --gpuperf-json="$W/results/$key/$tag-{backend}.json" ${GPUPERF_ARGS:-} 2>&1 \
  | tee "$W/logs/$tag.log" | tail -40
exit $(( rc | ${PIPESTATUS[0]} ))
