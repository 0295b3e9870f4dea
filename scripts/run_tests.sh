#!/usr/bin/env bash
# The project's tests, as CI runs them (README: "the tests"): first every test that may share the host, side by
# side on GPUPERF_TEST_WORKERS processes (pytest-xdist, default 2; a module marked xdist_group runs on one worker,
# so no worker waits on another's shared set-up); then, one at a time, the tests that judge
# PoCL timings (marked quiet_host: planted slowdowns, gate checks, the shipped suites on device 0), which
# another test beside them would make read 'contended'. Beside the first call, the docs' generated tables are
# checked against the results they name (python3 -m tools.evidence check: its fits use what the first call's
# workers leave of the cores while they wait on the processes they start); it ends before the second call.
# Extra arguments go to both pytest calls. Exit: the first call's status where it failed, else the docs
# check's, else the second's (9, HOST TOO BUSY TO GATE, where other jobs held the cores through the suites'
# timings).
set -uo pipefail
cd "$(dirname "$0")/.."
# Python's byte-code cache on, as .ci/run has it: with PYTHONDONTWRITEBYTECODE set, each xdist worker, the second
# call and every Python process the tests start (gpuperf runs, child pytest sessions, gate checks) compile and
# assertion-rewrite the plugin's and the tests' modules anew (collecting tests/ alone costs twice the CPU). Where
# the caller had turned the cache off, it is kept outside the checkout (PYTHONPYCACHEPREFIX), which stays clean.
if [ -n "${PYTHONDONTWRITEBYTECODE:-}" ]; then
  unset PYTHONDONTWRITEBYTECODE
  export PYTHONPYCACHEPREFIX="${PYTHONPYCACHEPREFIX:-${TMPDIR:-/tmp}/gpuperf-pycache-$(id -u)}"
fi
common=(--gpuperf-device=0 -p no:cacheprovider -rs)
docs_log=$(mktemp "${TMPDIR:-/tmp}/gpuperf-docs-check.XXXXXX")
python3 -m tools.evidence check >"$docs_log" 2>&1 &
docs_pid=$!
# the workers hold every core: joblib's seeded fits (n_jobs=-1) run in the worker, not in a process pool per worker
JOBLIB_MULTIPROCESSING=0 python3 -m pytest -n "${GPUPERF_TEST_WORKERS:-2}" --dist loadgroup -m "not quiet_host" "${common[@]}" tests/ "$@"
first=$?
wait "$docs_pid"
docs=$?
echo "docs' generated tables (python3 -m tools.evidence check, exit $docs):"
cat "$docs_log"
rm -f "$docs_log"
# only the test files that name quiet_host are collected (a test of tests/ is marked in its own file, the shipped
# suites by the root conftest.py): collecting all of tests/ to deselect the rest took ten seconds of this serial call
mapfile -t quiet < <(grep -l "quiet_host" tests/test_*.py)
python3 -m pytest -m quiet_host "${common[@]}" "${quiet[@]}" pytest_gpuperf/suites/ "$@"
second=$?
[ "$first" -ne 0 ] && exit "$first"
[ "$docs" -ne 0 ] && exit "$docs"
exit "$second"
