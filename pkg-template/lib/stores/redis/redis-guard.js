// The guarded update in Lua, shared by both scripts (redis-batch.js, redis-script.js). The core
// states with a write, when it can, a guard (`tollgate::guard`, src/guard.rs): "if the key holds
// the bytes I decided over with only these varint fields moved, all by one delta in [lo, hi],
// my decision holds there too, and its bytes are mine with the same fields moved by
// max(delta, knee) - max(0, knee)". The script checks exactly that and writes those bytes, so a
// writer that lost the race to another still lands without a round trip. It knows no algorithm:
// only varints, one delta and one shift. `Guard::apply` in src/guard.rs is the same rule in Rust.
//
// Lua's numbers are doubles and a state's times are nanoseconds above 2^53, so each varint is
// read as two exact parts, {hi, lo}: lo its low 28 bits (four 7-bit groups), hi the rest (below
// 2^36). A delta is computed from them only when it can be within the guard's range, whose
// bounds the core keeps within 2^50; every sum below then stays under 2^53, so exact.

/**
 * Defines `guarded(current, expected, written, guard)`: the bytes (hex) to write over
 * `current` and how far the expiry moved (ns; 0 when it is not a guarded field), or nil when
 * the guard does not apply (no guard, or any of the three values absent: '', which `varints`
 * refuses); and `shifted_ttl(ttl, moved)`.
 */
export const GUARD_LUA = `
local P28 = 268435456
local function varints(hex)
  if hex == '' or #hex % 2 == 1 or string.find(hex, '[^0-9a-f]') then return nil end
  local out, i, n = {}, 1, #hex
  while i <= n do
    local hi, lo, g, m = 0, 0, 0, 1
    while true do
      if i > n or g == 10 then return nil end
      local b = tonumber(string.sub(hex, i, i + 1), 16)
      i = i + 2
      if g == 4 then m = 1 end
      if g < 4 then lo = lo + (b % 128) * m else hi = hi + (b % 128) * m end
      m = m * 128
      g = g + 1
      if b < 128 then break end
    end
    if hi >= 68719476736 then return nil end
    out[#out + 1] = {hi, lo}
  end
  return out
end
local function put(out, hi, lo)
  for _ = 1, 4 do
    local bits = lo % 128
    lo = (lo - bits) / 128
    if lo == 0 and hi == 0 then out[#out + 1] = string.format('%02x', bits) return end
    out[#out + 1] = string.format('%02x', bits + 128)
  end
  while true do
    local bits = hi % 128
    hi = (hi - bits) / 128
    if hi == 0 then out[#out + 1] = string.format('%02x', bits) return end
    out[#out + 1] = string.format('%02x', bits + 128)
  end
end
local function guarded(cur, e, w, g)
  if g == nil or g == '' then return nil end
  local fields, lo, hi, knee = string.match(g, '^(%d+) (%-?%d+) (%-?%d+) (%-?%d+)$')
  if not fields then return nil end
  fields, lo, hi, knee = tonumber(fields), tonumber(lo), tonumber(hi), tonumber(knee)
  local ev, cv, wv = varints(e), varints(cur), varints(w)
  if not ev or not cv or not wv or #ev ~= #cv or #ev > 32 then return nil end
  local delta, f = nil, fields
  for i = 1, #ev do
    local moves = f % 2 == 1
    f = (f - f % 2) / 2
    local x, y = ev[i], cv[i]
    if moves then
      local dh = y[1] - x[1]
      if dh > 8388608 or dh < -8388608 then return nil end
      local d = dh * P28 + (y[2] - x[2])
      if delta == nil then delta = d elseif delta ~= d then return nil end
    elseif x[1] ~= y[1] or x[2] ~= y[2] then
      return nil
    end
  end
  if delta == nil or delta < lo or delta > hi then return nil end
  local s = math.max(delta, knee) - math.max(0, knee)
  local out = {}
  f = fields
  for i = 1, #wv do
    local vh, vl = wv[i][1], wv[i][2]
    if f % 2 == 1 then
      vl = vl + s
      local carry = math.floor(vl / P28)
      vl = vl - carry * P28
      vh = vh + carry
      if vh < 0 or vh >= 68719476736 then return nil end
    end
    f = (f - f % 2) / 2
    put(out, vh, vl)
  end
  if fields % 4 < 2 then s = 0 end
  return table.concat(out), s
end
-- The TTL (ms) of bytes whose expiry (varint 1 of every state) moved by s ns from bytes kept
-- ttl ms: never shorter.
local function shifted_ttl(ttl, s)
  local r = math.fmod(s, 1000000)
  local ms = (s - r) / 1000000
  if r > 0 then ms = ms + 1 end
  return math.max(1, tonumber(ttl) + ms)
end
`;
