// Each algorithm in a few plain sentences, shown first beside the chart; the module docs'
// precise wording and formulas (algorithm-docs.js) follow behind a "details" fold. The
// sentences are algorithms.js's (`prose`).
import { ALGORITHM_PAGES } from "./algorithms.js";

export const PROSE = Object.fromEntries(Object.entries(ALGORITHM_PAGES).map(([id, a]) => [id, a.prose]));
