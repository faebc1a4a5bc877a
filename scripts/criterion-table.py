#!/usr/bin/env python3
"""Prints criterion's medians as a markdown table, each tollgate row compared with the
fastest governor row of the same shape in its group: keyed with keyed, a single state with
governor's direct (unkeyed) limiter."""
import json
import pathlib
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "target/criterion")
CHECKS = 10_000_000
groups = {}
for est in sorted(root.glob("*/*/new/estimates.json")):
    bench = json.loads((est.parent / "benchmark.json").read_text())
    median_ns = json.loads(est.read_text())["median"]["point_estimate"]
    groups.setdefault(bench["group_id"], []).append((bench["function_id"], median_ns))

for group, rows in groups.items():
    def reference(keyed):
        same = [ns for name, ns in rows if name.startswith("governor") and ("keyed" in name) == keyed]
        return min(same, default=None)

    print(f"\n### {group}\n")
    print("| implementation | median per 10M checks | checks/s | speed vs governor, same shape |")
    print("|---|---:|---:|---:|")
    for name, ns in sorted(rows, key=lambda r: r[1]):
        ref = reference("keyed" in name)
        ratio = f"{ref / ns:.2f}x" if ref else "-"
        print(f"| {name} | {ns / 1e6:.1f} ms | {CHECKS / (ns / 1e9) / 1e6:.1f} M | {ratio} |")
