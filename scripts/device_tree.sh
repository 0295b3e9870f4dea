#!/usr/bin/env bash
# A copy of the checkout sent to a GPU host without network carries its tracked files; results/ holds the evidence of
# every GPU session and is larger. Before a session, leave results/ out of the index except the
# gate-check files a `--append` run extends and the power corpora a collection resumes (the device
# tree is fresh each call: a corpus left out would restart from nothing); after it, put the index back. Nothing in the work tree is
# touched, and `restore` is safe to run twice.
#   bash scripts/device_tree.sh slim      # before the call
#   bash scripts/device_tree.sh restore   # after it (before any commit)
set -euo pipefail
cd "$(dirname "$0")/.."
exclude="$(git rev-parse --git-common-dir)/info/exclude"
mkdir -p "$(dirname "$exclude")"
case "${1:-}" in
  slim)
    # the device copy has no usable .git: stamp the commit the call runs (gpu_prologue.sh exports it as
    # GPUPERF_COMMIT, so every results file names the code that made it; "+dirty" when tracked files differ)
    stamp=$(git rev-parse --short HEAD)
    git diff --quiet HEAD -- . ':!results' || stamp="$stamp+dirty"
    echo "$stamp" > .gpuperf-commit
    git rm -r -q --cached results
    grep -qx '/results/' "$exclude" 2>/dev/null || echo '/results/' >> "$exclude"
    for f in $(git ls-tree -r --name-only HEAD results | grep -E '^results/[^/]+/(gatecheck\.json|power-corpus-[a-z]+\.json)$'); do
      git reset -q HEAD -- "$f"
    done
    git ls-files -z | xargs -0 stat -c %s | awk '{s+=$1} END {printf "tracked now: %.1f MiB\n", s/1048576}' ;;
  restore)
    rm -f .gpuperf-commit
    git reset -q HEAD -- results
    sed -i '/^\/results\/$/d' "$exclude" ;;
  *) echo "usage: $0 slim|restore" >&2; exit 2 ;;
esac
