// The calendar window panel: a fixed window of a calendar day, ISO week or month at a UTC
// offset (`quota: "100/month"`, `offset: "-2h"`), decided by the core at an instant the
// reader picks. The reset shown is the decision's `resetAt`: the real boundary, computed by
// the core (no calendar arithmetic here).

export const CALENDAR_UNITS = ["day", "week", "month"];

const $ = (id) => document.getElementById(id);

/** The parts of a calendar quota ("100/month"), or null for anything else. */
export function calendarQuota(quota) {
  const m = /^(\d{1,9})\/(day|week|month)$/.exec(quota ?? "");
  return m ? { limit: Number(m[1]), unit: m[2] } : null;
}

/** An offset the URL may carry: a whole number and a unit, either sign ("-2h", "30m"). */
export const isOffset = (s) => /^-?\d{1,9}(ms|s|m|h|d)$/.test(s ?? "");

const DAY = 86_400_000;
const fmtIn = (ms) => {
  const d = Math.floor(ms / DAY);
  const h = Math.floor((ms % DAY) / 3_600_000);
  const m = Math.ceil((ms % 3_600_000) / 60_000);
  return `${d} d ${h} h ${m} min`;
};
const WEEKDAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];

/**
 * Wires the panel. `initial`: `{ quota, offset }` from the URL; `onChange` gets the same
 * shape when the reader changes them. Returns the panel's test hook.
 */
export function setupCalendar(RateLimiter, initial, onChange) {
  const q = calendarQuota(initial.quota) ?? { limit: 100, unit: "month" };
  $("calendar-unit").value = q.unit;
  $("calendar-limit").value = String(q.limit);
  $("calendar-offset").value = initial.offset ?? "";
  let limiter = null;
  let hits = 0;

  const options = () => {
    const o = { algorithm: "fixed-window", quota: `${$("calendar-limit").value}/${$("calendar-unit").value}`, name: "calendar" };
    const offset = $("calendar-offset").value.trim();
    if (offset !== "") o.offset = /^-?\d+$/.test(offset) ? Number(offset) : offset;
    return o;
  };
  /** The instant chosen, read as UTC. */
  const now = () => Date.parse(`${$("calendar-now").value}Z`);

  function show(decision, at) {
    const reset = new Date(decision.resetAt);
    $("calendar-reset").value = `${reset.toISOString()} (${WEEKDAYS[reset.getUTCDay()]}), in ${fmtIn(decision.resetAt - at)}`;
    $("calendar-reset").dataset.resetAt = String(decision.resetAt);
    $("calendar-decision").value = `${decision.allowed ? "allowed" : "blocked"}, ${decision.remaining} left of ${decision.limit}; ${hits} hit${hits === 1 ? "" : "s"} so far`;
    const h = limiter.headers(decision, { now: at });
    $("calendar-headers").textContent = Object.entries(h).map(([k, v]) => `${k}: ${v}`).join("\n");
  }

  function rebuild() {
    $("calendar-error").hidden = true;
    try {
      limiter = new RateLimiter(options());
    } catch (e) {
      limiter = null;
      $("calendar-error").textContent = e.message;
      $("calendar-error").hidden = false;
      return;
    }
    hits = 0;
    preview();
  }

  function preview() {
    if (!limiter || Number.isNaN(now())) return;
    show(limiter.peek("k", { now: now() }), now());
  }

  function hit() {
    if (!limiter || Number.isNaN(now())) return;
    hits++;
    show(limiter.limit("k", { now: now() }), now());
  }

  for (const id of ["calendar-unit", "calendar-limit", "calendar-offset"]) {
    $(id).addEventListener("change", () => {
      rebuild();
      if (limiter) onChange({ quota: options().quota, offset: $("calendar-offset").value.trim() });
    });
  }
  $("calendar-now").addEventListener("change", preview);
  $("calendar-hit").addEventListener("click", hit);
  rebuild();
  return { options };
}
