// A peer's own test suite run against tollgate, held to its docs page's table: the one count
// of tests/js/fastify-suite.test.mjs, tests/redis/fastify-suite.test.mjs and
// tests/js/erl-suite.test.mjs.

/**
 * `tests` (`{ file, name, ok, skipped }`) against `rows` (the page's `{ file, name, kind }`,
 * kind "fails" or "not applicable"): a test skipped by the suite or listed "not applicable"
 * does not count; of the rest, `passed` and `applicable`; `unexpected`: failures the page does
 * not list; `fixed`: passes the page lists as failing (each as "file: name").
 */
export function tally(tests, rows) {
  let passed = 0;
  let applicable = 0;
  const unexpected = [];
  const fixed = [];
  for (const t of tests) {
    if (t.skipped) continue;
    const listed = rows.find((d) => d.file === t.file && d.name === t.name);
    if (listed?.kind === "not applicable") continue;
    applicable++;
    if (t.ok) {
      passed++;
      if (listed !== undefined) fixed.push(`${t.file}: ${t.name}`);
    } else if (listed === undefined) {
      unexpected.push(`${t.file}: ${t.name}`);
    }
  }
  return { passed, applicable, unexpected, fixed };
}
