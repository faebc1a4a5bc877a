// Bytes as base64 and back, for state bytes in JSON bodies (the Worker's state routes), with
// `btoa`/`atob`, which Node, browsers and workerd all have.

export function toBase64(bytes) {
  let s = "";
  for (let i = 0; i < bytes.length; i++) s += String.fromCharCode(bytes[i]);
  return btoa(s);
}

export function fromBase64(text) {
  const s = atob(text);
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}
