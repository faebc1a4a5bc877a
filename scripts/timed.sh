#!/usr/bin/env bash
# The clock of `make test`: where its time goes, in CI's log. `make test` sets TOLLGATE_TIMES
# (target/test-logs/times.tsv); each lane, and the steps inside a lane worth telling apart,
# run through this script, which notes when each began (seconds after the run began) and how
# long it took; the run ends with the table. Lanes run side by side (scripts/test-beside.sh,
# the background builds of scripts/prebuild-worker.sh), so the rows overlap: the table is
# ordered by start, and the critical path is the chain of rows each of which begins as the one
# before it ends. `cpu` is the CPU time the step used (its processes' user + system time): far
# below `took`, the step waits (on servers, timers, a build beside it), and could overlap more.
#   scripts/timed.sh --begin            a new run: the record emptied, its start noted
#   scripts/timed.sh NAME CMD [ARG...]  runs CMD (its exit status is this script's) and notes NAME
#   scripts/timed.sh --table            prints the table
# Without TOLLGATE_TIMES (a lane run on its own, `make test-pkg`), NAME CMD only runs CMD.
set -euo pipefail
times="${TOLLGATE_TIMES:-}"
case "${1:-}" in
  --begin)
    [ -n "$times" ] || exit 0
    mkdir -p "$(dirname "$times")"
    date +%s.%N >"$times.start" && : >"$times"
    ;;
  --table)
    [ -n "$times" ] && [ -f "$times" ] || exit 0
    start=$(cat "$times.start")
    now=$(date +%s.%N)
    echo "== make test: where the time went (seconds; rows overlap where lanes run side by side)"
    printf '%-36s %8s %8s %8s %8s  %s\n' step began took ended cpu status
    sort -t $'\t' -k2,2n "$times" | awk -F '\t' '{ printf "%-36s %8.0f %8.0f %8.0f %8.0f  %s\n", $1, $2, $3, $2 + $3, $5, ($4 == 0 ? "ok" : "exit " $4) }'
    awk -v s="$start" -v n="$now" 'BEGIN { printf "%-36s %8.0f %8.0f\n", "make test (whole run)", 0, n - s }'
    ;;
  *)
    [ $# -ge 2 ] || { echo "usage: scripts/timed.sh --begin | --table | NAME CMD [ARG...]" >&2; exit 2; }
    if [ -z "$times" ] || [ ! -f "$times.start" ]; then shift; exec "$@"; fi
    name=$1 && shift
    began=$(date +%s.%N)
    status=0
    "$@" || status=$?
    ended=$(date +%s.%N)
    # The CPU time of CMD and everything it waited for (user + system, bash's `times`), which
    # says whether the step computed or waited, whatever else ran beside it.
    cpu_file=$(mktemp)
    times >"$cpu_file" # in this shell: a subshell's `times` would not count CMD
    cpu=$(tail -1 "$cpu_file" | awk '{ t = 0; for (i = 1; i <= 2; i++) { split($i, p, /[ms]/); t += p[1] * 60 + p[2] } print t }')
    rm -f "$cpu_file"
    # One short line appended at once: rows from lanes running side by side never interleave.
    awk -v n="$name" -v s="$(cat "$times.start")" -v b="$began" -v e="$ended" -v st="$status" -v c="$cpu" \
      'BEGIN { printf "%s\t%.1f\t%.1f\t%d\t%.1f\n", n, b - s, e - b, st, c }' >>"$times"
    exit "$status"
    ;;
esac
