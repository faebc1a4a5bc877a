#!/usr/bin/env bash
# `make run`: until the Worker exists, the main job is the example.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh rust
exec cargo run --quiet --release --example chat_trace
