#!/usr/bin/env bash
# `make bench-instructions`: instructions per check of each row of benches/headline.rs that is
# not a resident-keys row, counted by valgrind's callgrind (the VMs have no hardware counters
# for `perf stat`): each row runs alone at two check counts, and the difference in instructions
# over the difference in checks leaves out the set-up. Exact and repeatable, unlike times; the
# clock rows count the clock read too (rdtsc is one instruction under valgrind).
#   scripts/bench-instructions.sh [pattern]   only the rows whose name contains pattern
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
command -v valgrind >/dev/null || { echo "valgrind is needed (apt-get install valgrind)" >&2; exit 1; }
bin=$(cargo bench --bench headline --no-run --message-format=json 2>/dev/null |
  python3 -c 'import json,sys; [print(m["executable"]) for m in map(json.loads, sys.stdin) if m.get("executable") and m["target"]["name"] == "headline"]' | tail -1)
count() { # count <row> <checks>: instructions of the whole run
  HEADLINE_ONLY="$1" HEADLINE_CHECKS="$2" valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" 2>&1 |
    sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
small=100000 large=300000
echo "| implementation | instructions per check |"
echo "|---|---:|"
"$bin" --list-rows | grep -v '^resident' | cut -f2 | grep -F -- "${1:-}" | while read -r row; do
  a=$(count "$row" $small) b=$(count "$row" $large)
  echo "| $row | $(python3 -c "print(f'{($b - $a) / ($large - $small):.1f}')") |"
done
