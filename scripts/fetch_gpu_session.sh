#!/usr/bin/env bash
# Unpack what scripts/gpu_session.sh produced on the GPU machine (the folder it was brought back to,
# or a session.tgz path) into the repository: results/<key>/<backend>.json, the logs beside them, and
# the baselines it updated. Run from the repo root:  bash scripts/fetch_gpu_session.sh OUT_DIR
set -euo pipefail
src=${1:?usage: fetch_gpu_session.sh OUT_DIR_OR_SESSION_TGZ}
tgz=$src; [ -d "$src" ] && tgz="$src/session.tgz"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
tar xzf "$tgz" -C "$tmp"
for dir in "$tmp"/results/*/; do
  [ -d "$dir" ] || continue
  key=$(basename "$dir")
  mkdir -p "results/$key/logs"
  for f in "$dir"/*.json; do
    [ -e "$f" ] || continue
    name=$(basename "$f"); dest="results/$key/$name"
    if [[ "$name" == power-corpus-*.json ]] && [ -f "$dest" ] && ! cmp -s "$f" "$dest"; then
      # a call that could not resume the checkout's corpus measured some configurations again: join them
      # (first measurement kept, the later ones in info.repeats) rather than replace the corpus
      python3 -m pytest_gpuperf.power.collect --merge "$dest" "$f" --out "$dest"
    elif [ "$name" != gatecheck.json ] && [ -f "$dest" ] && ! cmp -s "$f" "$dest"; then  # gatecheck.json: appended on the device
      echo "refusing to overwrite $dest with a different file from this session: give the run a new" \
           "GPUPERF_TAG, or move the old file away first" >&2
      exit 2
    else
      cp "$f" "$dest"
    fi
  done
  if [ -d "$dir/gatecheck" ]; then mkdir -p "results/$key/gatecheck"; cp "$dir"/gatecheck/* "results/$key/gatecheck/"; fi
  cp "$dir"/*.csv "results/$key/" 2>/dev/null || true  # raw ncu output of the counter classification
  cp "$tmp"/logs/* "results/$key/logs/" 2>/dev/null || true
  echo "results/$key: $(ls "$dir" | tr '\n' ' ')"
done
if [ "${GPUPERF_FETCH_BASELINES:-1}" = 1 ] && ls "$tmp"/baselines/*.json >/dev/null 2>&1; then
  cp "$tmp"/baselines/*.json baselines/
  echo "baselines: $(cd "$tmp/baselines" && ls *.json | tr '\n' ' ')"
fi
# The session's runs into the committed history (idempotent: runs already there are skipped).
# (a session that brought back only a power corpus has no run to import: that is not an error here)
docs=$(grep -l '"schema": *"pytest-gpuperf/1"' "$tmp"/results/*/*.json 2>/dev/null || true)
if [ -n "$docs" ]; then
  python3 -m pytest_gpuperf.cli history import $docs --db results/history.db
fi
