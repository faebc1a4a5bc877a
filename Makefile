# tollgate: the two commands of the README are `make run` and `make test`.
# Every target does its own set-up (scripts/setup.sh), skipping what is already present.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
export PATH := $(HOME)/.cargo/bin:$(PATH)
export CARGO_TERM_COLOR := never

.PHONY: run test setup example test-core test-nostd bench bench-core clean

## The main job: the rate-limit service with the playground on http://127.0.0.1:8787/
run:
	scripts/run.sh

## Every test the project has.
test: test-core test-nostd
	@echo "make test: all passed"

setup:
	scripts/setup.sh all

## The newcomer's example: every algorithm on one bursty chat trace.
example:
	cargo run --quiet --release --example chat_trace

## Core crate: unit, integration, property and doc tests.
test-core:
	scripts/setup.sh rust
	cargo test --quiet

## The core builds without std for wasm32 (no_std + alloc).
test-nostd:
	scripts/setup.sh rust
	cargo build --quiet --no-default-features --target wasm32-unknown-unknown

## Benchmarks (not part of `make test`).
bench: bench-core

bench-core:
	cargo bench --bench throughput

clean:
	cargo clean
	rm -rf pkg
