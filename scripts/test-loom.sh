#!/usr/bin/env bash
# The loom model of the sharded limiter's lock (src/sharded.rs, `loom_tests`): every
# interleaving of three threads' hits admits exactly the limit. Built with `--cfg loom` in its
# own target directory, so the ordinary builds keep their artifacts.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom LOOM_MAX_PREEMPTIONS=3 \
  timeout 1200 cargo test --lib -- sharded::loom_tests
