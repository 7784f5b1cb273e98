#!/usr/bin/env bash
# Runs the mutation run module by module (each run adds to reports/mutation/incremental.json), logging to
# reports/mutation/run-<module>.log. Extra arguments go to every `stryker run`.
set -u
cd "$(dirname "$0")/.."
for m in ${MUTATE_ORDER:-policy range prune meter compaction checker}; do
  echo "== $m $(date -u +%H:%M:%S)"
  MUTATE_MODULES=$m pnpm --silent mutate "$@" > "reports/mutation/run-$m.log" 2>&1
  echo "== $m done rc=$? $(date -u +%H:%M:%S)"
done
