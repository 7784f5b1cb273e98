#!/usr/bin/env bash
# under-load.sh — run a command while CPU-burning processes compete with it (issue #18).
#
#   scripts/under-load.sh <command> [args...]
#   BURNERS=8 scripts/under-load.sh pnpm test
#
# Starts BURNERS busy-loop processes (default: 2 per CPU core, from `nproc`), runs the command in the
# foreground, then stops the burners — on normal exit, on Ctrl-C and on SIGTERM (trap). The command's exit
# code is passed through (130 after Ctrl-C). The wall time, the burner count and the load average are
# reported on stderr; the command's own stdout and stderr are untouched. Pure bash + coreutils.
# A burner also stops by itself once this script is gone, so a SIGKILLed script leaves no busy loops behind.
set -u

if [ "$#" -eq 0 ]; then
  echo "usage: scripts/under-load.sh <command> [args...]   (BURNERS=n overrides the default of 2 per core)" >&2
  exit 2
fi

cores=$(nproc 2>/dev/null || echo 1)
burners=${BURNERS:-$((cores * 2))}
case "$burners" in
  '' | *[!0-9]*)
    echo "under-load: BURNERS=${burners}: expected a whole number >= 0" >&2
    exit 2
    ;;
esac

owner=$$
pids=()

stop_burners() {
  local pid
  for pid in "${pids[@]+"${pids[@]}"}"; do
    kill "$pid" 2>/dev/null
  done
  for pid in "${pids[@]+"${pids[@]}"}"; do
    wait "$pid" 2>/dev/null
  done
  pids=()
}

# "burner" or "burners" for a count (the word's plural is its + s).
plural() {
  if [ "$1" = 1 ]; then printf '%s' "$2"; else printf '%ss' "$2"; fi
}

load_average() {
  if [ -r /proc/loadavg ]; then
    cut -d ' ' -f 1-3 /proc/loadavg
  else
    uptime | sed 's/.*load averages*: *//'
  fi
}

trap stop_burners EXIT
trap 'stop_burners; exit 130' INT
trap 'stop_burners; exit 143' TERM

for ((i = 0; i < burners; i++)); do
  # A busy loop that checks every ~100k iterations whether this script still exists.
  (
    trap - EXIT INT TERM
    while kill -0 "$owner" 2>/dev/null; do
      for ((j = 0; j < 100000; j++)); do :; done
    done
  ) &
  pids+=("$!")
done

echo "under-load: ${burners} CPU $(plural "$burners" burner) on ${cores} $(plural "$cores" core); load average before: $(load_average)" >&2
started=$(date +%s%N)
"$@"
rc=$?
ended=$(date +%s%N)
load_after=$(load_average)
stop_burners
elapsed_ms=$(((ended - started) / 1000000))
printf 'under-load: wall %d.%03d s with %s %s on %s %s; load average at the end: %s; exit code %d\n' \
  $((elapsed_ms / 1000)) $((elapsed_ms % 1000)) "$burners" "$(plural "$burners" burner)" "$cores" "$(plural "$cores" core)" "$load_after" "$rc" >&2
exit "$rc"
