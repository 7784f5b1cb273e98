#!/usr/bin/env bash
# Runs the mutation run module by module (each keeps its state in reports/mutation/state/<module>.json and its
# report in reports/mutation/modules/<module>.json), logging to reports/mutation/run-<module>.log. The checker
# runs chunk by chunk, so an interrupted run keeps the chunks already done. Extra arguments go to every
# `stryker run`. Commit reports/mutation/{state,modules}/ after it; scripts/mutation-survivors.mjs sums them up.
set -u
cd "$(dirname "$0")/.."
for m in ${MUTATE_ORDER:-policy range prune meter compaction checker-meter checker-policy checker-offload checker-surface checker-bracket checker-model checker-input checker-hardened checker-run}; do
  echo "== $m $(date -u +%H:%M:%S)"
  MUTATE_MODULES=$m pnpm --silent mutate "$@" > "reports/mutation/run-$m.log" 2>&1
  echo "== $m done rc=$? $(date -u +%H:%M:%S)"
done
