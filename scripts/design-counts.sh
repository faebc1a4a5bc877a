#!/usr/bin/env bash
# The design's counts, for CONTRIBUTING.md ("Design counts"): counted from the tracked files,
# never typed by hand. Each count is a stated heuristic over the text (no compiler, no types);
# every count prints what it counted, so a reader can check it by eye.
#   scripts/design-counts.sh            the counts and what they counted
#   scripts/design-counts.sh --table    the table CONTRIBUTING.md shows
#
# Test code is left out everywhere: files under tests/ or test/, *.test.*, *_tests.rs, tests.rs,
# and in Rust the item after a `#[cfg(test)]` attribute (a `mod x;` line or a braced block).
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 - "$@" <<'PY'
import re, subprocess, sys

table = "--table" in sys.argv[1:]
FILES = subprocess.run(["git", "ls-files"], capture_output=True, text=True, check=True).stdout.split()
ALGORITHMS = ["fixed-window", "sliding-log", "sliding-window", "sliding-buckets", "token-bucket", "gcra"]

def is_test(path):
    return bool(re.search(r"(^|/)tests?/|\.test\.|_tests\.rs$|(^|/)tests\.rs$", path))

def code(path):
    return re.search(r"\.(rs|js|mjs|cjs|ts)$", path) is not None

def generated(lines):
    return any(re.search(r"generated", l, re.I) for l in lines[:5])

def braced_end(lines, i):
    """The index of the line closing the block that opens on line i (or i if none opens)."""
    depth, opened = 0, False
    for j in range(i, len(lines)):
        for ch in re.sub(r"//.*", "", lines[j]):
            if ch == "{":
                depth, opened = depth + 1, True
            elif ch == "}":
                depth -= 1
        if opened and depth <= 0:
            return j
        if not opened and lines[j].rstrip().endswith(";"):
            return j
    return len(lines) - 1

def non_test_lines(path):
    """The file's lines with Rust `#[cfg(test)]` items blanked out (their count kept as None)."""
    lines = open(path, encoding="utf-8", errors="replace").read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if not path.endswith(".rs"):
        return lines
    out, i = [], 0
    while i < len(lines):
        if re.match(r"\s*#\[cfg\(test\)\]", lines[i]):
            end = braced_end(lines, i + 1)
            out.extend([None] * (end - i + 1))
            i = end + 1
        else:
            out.append(lines[i])
            i += 1
    return out

def under(path, roots):
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)

def enclosing_fn(lines, i):
    for j in range(i, -1, -1):
        l = lines[j]
        if l is None:
            continue
        m = re.match(r"\s*(?:pub(?:\([^)]*\))?\s+)?(?:const\s+)?(?:unsafe\s+)?fn\s+(\w+)", l)
        if m:
            return j, m.group(1)
    return -1, "?"

# 1. Functions calling an algorithm's check/peek: outside the algorithms themselves
# (src/algorithm.rs, src/algorithms/), a call of `check`, `peek`, `check_in_place` or
# `peek_in_place` on a receiver the code names as an algorithm (`algorithm`, `a`, and the
# pacer's two GCRAs `whole` and `share`), or of `check_slot` (an algorithm's check of one slot).
# Heuristic: by the receiver's name, not its type.
CALL = re.compile(r"(?:\b(?:algorithm|a|whole|share)\.(?:check|peek|check_in_place|peek_in_place)|\bcheck_slot)\(")
calls = {}
for f in FILES:
    if not f.endswith(".rs") or is_test(f) or f == "src/algorithm.rs" or f.startswith("src/algorithms/"):
        continue
    if not under(f, ["src", "wasm", "wasm-common", "wasm-extras", "worker/src", "www-wasm"]):
        continue
    lines = non_test_lines(f)
    for i, l in enumerate(lines):
        if l is None or re.match(r"\s*//", l) or not CALL.search(l):
            continue
        j, name = enclosing_fn(lines, i)
        if re.search(r"\bfn\s+check_slot\b", lines[j] or ""):
            continue  # check_slot itself
        calls.setdefault((f, j + 1, name), []).append(i + 1)

# 2. Retry or compare-and-swap loops outside src/: a Rust or JavaScript loop (`loop`, `while`,
# `for`, opening a brace) in non-test code of wasm*/, worker/src, pkg-template/lib whose header
# or body names an attempt, a retry, a give-up time, rounds or a busy answer (`attempt`,
# `retry`/`retries` as words, `give_up`/`giveUp`, `ROUNDS`, `busy`), counted innermost only,
# and not when it names a reconnect (an I/O reconnect is not one). A back-off alone does not
# make one: the lease holder's renewal loop backs off between renewals and is not counted.
# Lua inside JavaScript strings has no braced loops and is not counted: a script runs
# atomically and cannot retry. Heuristic: by the words in the loop.
LOOP = re.compile(r"^\s*(?:[\w:]+\s*:\s*)?(?:loop\b|while\b|for\b).*\{\s*$")
RETRY = re.compile(r"attempt|\bretr(?:y|ies)\b|give_?up|ROUNDS|\bbusy\b|is_busy", re.I)
loops = []
for f in FILES:
    if not code(f) or is_test(f) or not under(f, ["wasm", "wasm-common", "wasm-extras", "worker/src", "pkg-template/lib"]):
        continue
    lines = non_test_lines(f)
    found = []
    for i, l in enumerate(lines):
        if l is None or not LOOP.match(l):
            continue
        end = braced_end(lines, i)
        body = "\n".join(x for x in lines[i:end + 1] if x is not None and not re.match(r"\s*(//|\*|/\*)", x))
        if RETRY.search(body) and not re.search(r"reconnect", body, re.I):
            found.append((i, end))
    for (i, end) in found:
        if not any(i < i2 and e2 <= end for (i2, e2) in found):
            loops.append((f, i + 1, lines[i].strip()))

# 3. Files outside src/ listing five or more algorithm names by hand: tracked code files
# (.rs .js .mjs .cjs .ts) outside src/, tests and examples/, holding five or more of the six
# names as quoted strings ("gcra", 'gcra' or `gcra`), unless their first five lines say they
# are generated.
lists = []
for f in FILES:
    if not code(f) or is_test(f) or under(f, ["src", "examples"]):
        continue
    text = open(f, encoding="utf-8", errors="replace").read()
    if generated(text.split("\n")):
        continue
    names = [a for a in ALGORITHMS if re.search(r"[\"'`]" + re.escape(a) + r"[\"'`]", text)]
    if len(names) >= 5:
        lists.append((f, len(names)))

# 4. JS limiter classes that decide: classes in pkg-template/lib whose own code makes a
# decision's `allowed` in JavaScript, from a comparison (`allowed = used <= limit`) or as a
# literal in a decision object (`{ allowed: false, ... }`, `d.allowed = true`), rather than
# reading it from the wasm module's answer. Heuristic: by the text of the class body.
DECIDES = re.compile(r"\ballowed\s*=\s*[^=;][^;]*[<>]|\ballowed\s*:\s*(?:true|false)\b|\.allowed\s*=\s*(?:true|false)\b")
deciders = []
for f in FILES:
    if not f.startswith("pkg-template/lib/") or not code(f) or is_test(f):
        continue
    lines = non_test_lines(f)
    for i, l in enumerate(lines):
        m = re.match(r"\s*(?:export\s+)?class\s+(\w+)", l or "")
        if not m:
            continue
        end = braced_end(lines, i)
        hits = [k + 1 for k in range(i, end + 1)
                if lines[k] and not re.match(r"\s*(//|\*|/\*)", lines[k]) and DECIDES.search(lines[k])]
        if hits:
            deciders.append((f, m.group(1), hits))

# 5. Non-test lines of the edges that exist today, beside the core's: files whose first five
# lines say they are generated aside.
PARTS = [("core", ["src"]), ("wasm*/", ["wasm", "wasm-common", "wasm-extras"]), ("worker/src", ["worker/src"]),
         ("pkg-template/lib", ["pkg-template/lib"]), ("pkg-template/types", ["pkg-template/types"])]
counts, aside = {}, []
for label, roots in PARTS:
    n = 0
    for f in FILES:
        if not code(f) or is_test(f) or not under(f, roots):
            continue
        lines = non_test_lines(f)
        if generated([l or "" for l in lines]):
            aside.append(f)
            continue
        n += sum(1 for l in lines if l is not None)
    counts[label] = n
edges = sum(v for k, v in counts.items() if k != "core")

def fmt(n):
    return f"{n:,}"

if table:
    print("| count | today |")
    print("|---|---:|")
    print(f"| functions calling an algorithm's `check`/`peek` | {len(calls)} in {len({f for f, _, _ in calls})} files |")
    print(f"| retry or compare-and-swap loops outside `src/` | {len(loops)} |")
    print(f"| files outside `src/` listing five or more algorithm names by hand | {len(lists)} |")
    print(f"| JS limiter classes that decide | {len(deciders)} |")
    print(f"| non-test lines: the core `src/` | {fmt(counts['core'])} |")
    for label, _ in PARTS[1:]:
        print(f"| non-test lines: `{label}` | {fmt(counts[label])} |")
    print(f"| non-test lines: the edges together | {fmt(edges)} ({edges / counts['core']:.2f}x the core) |")
    sys.exit(0)

print(f"1. functions calling an algorithm's check/peek: {len(calls)}")
for (f, line, name), at in sorted(calls.items()):
    print(f"   {f}:{line} fn {name} (calls at {', '.join(map(str, at))})")
print(f"2. retry or compare-and-swap loops outside src/: {len(loops)}")
for f, line, text in loops:
    print(f"   {f}:{line} {text}")
print(f"3. files outside src/ listing five or more algorithm names by hand: {len(lists)}")
for f, n in lists:
    print(f"   {f} ({n} names)")
print(f"4. JS limiter classes that decide: {len(deciders)}")
for f, name, hits in deciders:
    print(f"   {f} class {name} (lines {', '.join(map(str, hits))})")
print("5. non-test lines:")
for label, _ in PARTS:
    print(f"   {label}: {fmt(counts[label])}")
print(f"   the edges together: {fmt(edges)} ({edges / counts['core']:.2f}x the core)")
print(f"   generated, aside: {', '.join(aside) or 'none'}")
PY
