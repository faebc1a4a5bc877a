#!/usr/bin/env bash
# The loom model of the sharded limiter's lock (src/sharded.rs, `loom_tests`): every
# interleaving of three threads' hits admits exactly the limit. Only this crate's unit tests are
# compiled with `--cfg loom` (`cargo rustc`, the flag for this crate alone), so every dependency
# is the build `cargo test` made; RUSTFLAGS would set it for all of them and rebuild the world.
# The binary is a file of its own beside `cargo test`'s (the flag is in its hash).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
exe=$(cargo rustc --quiet --lib --profile test --message-format=json-render-diagnostics -- --cfg loom |
  python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["kind"] == ["lib"]:
        print(m["executable"])')
[ -n "$exe" ] || { echo "test-loom: no unit-test binary was built" >&2; exit 1; }
LOOM_MAX_PREEMPTIONS=3 timeout 1200 "$exe" sharded::loom_tests
