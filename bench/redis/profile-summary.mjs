// `node bench/redis/profile-summary.mjs <file.cpuprofile> [top]`: the heaviest functions of a
// V8 CPU profile by self time (what profile-child.mjs prints), and self time by script;
// `node profile-summary.mjs <file> <top> <from> <to>`: only the samples in that window (µs,
// hotkey-child.mjs's `window`).
import { readFileSync } from "node:fs";

export function summary(file, top = 30, from = -Infinity, to = Infinity) {
  const profile = JSON.parse(readFileSync(file, "utf8"));
  const dt = profile.timeDeltas;
  const self = new Map();
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  let at = profile.startTime;
  profile.samples.forEach((id, i) => {
    at += dt[i] ?? 0;
    if (at >= from && at <= to) self.set(id, (self.get(id) ?? 0) + (dt[i] ?? 0));
  });
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const byName = new Map();
  const byScript = new Map();
  for (const [id, us] of self) {
    const f = byId.get(id).callFrame;
    const script = f.url.split("/").slice(-2).join("/") || f.functionName;
    const name = `${f.functionName || "(anonymous)"} ${script}:${f.lineNumber + 1}`;
    byName.set(name, (byName.get(name) ?? 0) + us);
    byScript.set(script, (byScript.get(script) ?? 0) + us);
  }
  const lines = [`profile ${file}: ${(total / 1000).toFixed(0)} ms sampled`];
  const show = (m, n) => {
    for (const [name, us] of [...m].sort((a, b) => b[1] - a[1]).slice(0, n)) {
      lines.push(`${((100 * us) / total).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(1).padStart(7)} ms  ${name}`);
    }
  };
  show(byName, top);
  lines.push("by script:");
  show(byScript, 15);
  return lines.join("\n");
}

if (import.meta.url === `file://${process.argv[1]}`) {
  // [from to]: only the samples in that window (µs, the child's `window`).
  const [file, top = 30, from = -Infinity, to = Infinity] = process.argv.slice(2);
  console.log(summary(file, Number(top), Number(from), Number(to)));
}
