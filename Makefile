# tollgate: the two commands of the README are `make run` and `make test`.
# Every target does its own set-up (scripts/setup.sh), skipping what is already present.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
export PATH := $(HOME)/.cargo/bin:$(PATH)
export CARGO_TERM_COLOR := never

.PHONY: run test test-clock test-prebuild test-beside setup example llm-gateway test-core test-nostd contracts test-worker bench bench-core bench-headline bench-threads example-axum bench-instructions bench-worker clean pkg pkg-debug test-pkg bench-js test-pacer test-lease test-redis bench-redis bench-worker-store bench-concurrency www test-www test-equivalence test-targets

## The main job: the rate-limit service with the playground on http://127.0.0.1:8787/
## (the Worker under wrangler dev, state persisted in worker/.state; Ctrl-C stops it).
run:
	scripts/run.sh

## Every test the project has. The Worker's wasm build starts first, in the background
## (scripts/prebuild-worker.sh), and test-worker waits for it; after test-worker the
## equivalence suite runs beside test-pkg, test-pacer, test-lease and test-www, and so does
## test-targets at a lower CPU priority; then test-redis runs (scripts/test-beside.sh).
## It ends with a table of how long each lane and step took (scripts/timed.sh).
test: export TOLLGATE_TIMES := $(CURDIR)/target/test-logs/times.tsv
test: test-clock test-prebuild test-core test-nostd test-worker test-beside
	@scripts/timed.sh --table
	@echo "make test: all passed"

test-clock:
	@scripts/timed.sh --begin

test-beside:
	scripts/timed.sh test-beside scripts/test-beside.sh

test-prebuild:
	scripts/prebuild-worker.sh

setup:
	scripts/setup.sh all

## The newcomer's example: every algorithm on one bursty chat trace.
example:
	cargo run --quiet --release --example chat_trace

## The LLM gateway example (examples/llm-gateway/README.md): a mock OpenAI-compatible upstream
## and the gateway in front of it on http://127.0.0.1:8790/ (Node; Ctrl-C stops both). Its tests
## run in test-pkg (tests/js/llm-gateway*.test.mjs).
llm-gateway:
	scripts/setup.sh npm
	scripts/pkg-current.sh examples/llm-gateway
	cd examples/llm-gateway && node start.mjs

## Core crate: unit, integration, property and doc tests; and no function outside src/
## decides or computes a figure (scripts/design-counts.sh --check).
test-core:
	scripts/setup.sh rust
	scripts/timed.sh test-core/cargo-test cargo test --quiet
	scripts/timed.sh test-core/design-counts scripts/design-counts.sh --check >/dev/null
	scripts/timed.sh test-core/loom scripts/test-loom.sh

## Rewrites the contracts generated from the core (tests/contracts.rs: algorithm names, option
## fields, error codes, the wasm boundary's layouts, the Worker's JSON fields) for the npm package,
## and the Lua guard's vectors (tests/guard_vectors.rs); test-core checks them.
contracts:
	TOLLGATE_CONTRACTS=write cargo test --quiet --test contracts --test guard_vectors

## The core builds without std for wasm32 (no_std + alloc).
test-nostd:
	scripts/setup.sh rust
	scripts/timed.sh test-nostd cargo build --quiet --no-default-features --target wasm32-unknown-unknown
	scripts/timed.sh test-nostd/serde cargo build --quiet --no-default-features --features serde --target wasm32-unknown-unknown
	scripts/timed.sh test-nostd/concurrency cargo build --quiet --no-default-features --features concurrency --target wasm32-unknown-unknown

## The Cloudflare Worker: unit tests, then end-to-end in workerd (Miniflare, wrangler dev).
test-worker:
	scripts/timed.sh test-worker scripts/test-worker.sh

## The npm package in pkg/ (cargo builds of its three wasm modules, wasm-bindgen per target; see docs/js-layer.md).
## Always builds; the test targets go through scripts/pkg-current.sh, which builds only when stale.
pkg:
	scripts/build-pkg.sh

## The same with a debug wasm and console_error_panic_hook.
pkg-debug:
	scripts/build-pkg.sh debug

## The npm package: wasm-bindgen-test (Node, Chromium), then node --test against the packed tarball.
test-pkg:
	scripts/test-pkg.sh

## The npm package where users build and serve it (tests/targets/): Next.js 16 (proxy.ts, Edge
## middleware, Node and Edge Route Handlers; Turbopack and webpack; next start and next dev),
## Vite 8 and webpack 5 in Chromium, edge-runtime without wasm code generation, Bun, Deno, esbuild.
test-targets:
	scripts/test-targets.sh

## The JS pacer (client-side pacing) against the packed package, in simulated time.
test-pacer:
	scripts/test-pacer.sh

## LeasedPacer (JS client of capacity leases) against the real Worker in workerd: several
## uncoordinated holders, in-process and in separate processes, one SIGKILLed.
test-lease:
	scripts/test-lease.sh

## The Redis store against a real redis-server on a throwaway port, with node-redis and ioredis.
test-redis:
	scripts/test-redis.sh

## The same decisions across the HTTP boundary: the equivalence fixture through the Worker
## (exact and synced modes) and through the npm WorkerStore (HTTP and a service binding), the
## pacer on the Worker's headers, the lease holder on its grants.
test-equivalence:
	scripts/test-equivalence.sh

## The playground's copy of the wasm package (www/vendor/tollgate; builds pkg/ when stale).
www:
	scripts/build-www.sh

## The playground (www/) in headless Chromium: static pages and live mode against the Worker.
test-www:
	scripts/test-www.sh

## Benchmarks (not part of `make test`).
bench: bench-core bench-headline bench-threads bench-instructions bench-worker bench-js bench-redis bench-worker-store bench-concurrency

bench-core:
	cargo bench --bench throughput

## The README's headline figures: tollgate against governor's default limiters and the plain-code
## floor (hashbrown), one state, one hot key and 1M resident keys (benches/headline.rs).
bench-headline:
	cargo bench --bench headline

## The axum tower Layer over the sharded limiter (examples/axum-layer, its own workspace and
## lock file; not in `make test`: axum and tokio take minutes to build).
example-axum:
	cargo test --manifest-path examples/axum-layer/Cargo.toml

## The sharded limiter against governor's keyed limiter, 1, 2 and N threads, one hot key and
## 1M keys (benches/threads.rs).
bench-threads:
	cargo bench --bench threads

## Instructions per check of the same rows, counted by valgrind's callgrind.
bench-instructions:
	scripts/setup.sh bench
	scripts/bench-instructions.sh

## Worker load test (autocannon on loopback) and sync-mode over-admission; see docs/benchmarks.md.
bench-worker:
	scripts/bench-worker.sh

## W1/W2 in Node: tollgate vs rate-limiter-flexible vs plain-JS GCRA; then W3, 1M resident keys;
## then one key under a sliding-log or sliding-buckets limit, decided in the slab; then one hot
## key's per-call APIs against the plain-JS GCRA and the floor of a call; then several keys and
## several limits through the compact store's Store::update; a concurrency limit's acquire+release
## against p-limit and bottleneck (docs/benchmarks.md).
bench-js:
	scripts/setup.sh redis,npm,npm-bench
	scripts/pkg-current.sh
	node --expose-gc bench/js/bench.mjs
	node --expose-gc bench/js/resident.mjs
	node bench/js/slab.mjs
	node bench/js/hot-key.mjs
	node bench/js/several.mjs
	node bench/js/concurrency.mjs

## The Redis store vs rate-limiter-flexible's RateLimiterRedis, and the sync modes' over-admission.
bench-redis:
	scripts/bench-redis.sh

## The concurrency limit's kill test over Redis at 100,000 leases (make test-redis runs it at 600):
## 32 processes, 8 in flight, 5% of holders killed; 0 upstream violations, 0 leaked slots.
bench-concurrency:
	scripts/setup.sh redis,npm >/dev/null
	scripts/pkg-current.sh tests/redis
	KILL_TEST_HOLDS=100000 node --test tests/redis/kill.test.mjs

## WorkerStore against the Worker on loopback beside RedisStore (decisions/s, median and p99 latency).
bench-worker-store:
	scripts/bench-worker-store.sh

clean:
	cargo clean
	rm -rf pkg worker/build worker/build-test www/vendor
