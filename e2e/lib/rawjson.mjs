// Raw JSON token access: JSON.parse turns 9007199254740993 into 9007199254740992, so id and
// progress-token preservation is checked on the raw text of a message. rawValueAt() scans the text
// and returns the exact source text of the value at a path of object keys, or undefined.

function skipWs(s, i) {
  while (i < s.length && (s[i] === ' ' || s[i] === '\t' || s[i] === '\n' || s[i] === '\r')) i++;
  return i;
}

function scanString(s, i) {
  if (s[i] !== '"') throw new SyntaxError(`expected string at ${i}`);
  i++;
  while (i < s.length) {
    const c = s[i];
    if (c === '\\') i += 2;
    else if (c === '"') return i + 1;
    else i++;
  }
  throw new SyntaxError('unterminated string');
}

// Returns the index just past the value starting at i (after whitespace).
function scanValue(s, i) {
  i = skipWs(s, i);
  const c = s[i];
  if (c === '"') return scanString(s, i);
  if (c === '{' || c === '[') {
    const close = c === '{' ? '}' : ']';
    i = skipWs(s, i + 1);
    if (s[i] === close) return i + 1;
    for (;;) {
      if (c === '{') {
        i = scanString(s, skipWs(s, i));
        i = skipWs(s, i);
        if (s[i] !== ':') throw new SyntaxError(`expected ':' at ${i}`);
        i++;
      }
      i = skipWs(s, scanValue(s, i));
      if (s[i] === ',') { i++; continue; }
      if (s[i] === close) return i + 1;
      throw new SyntaxError(`expected ',' or '${close}' at ${i}`);
    }
  }
  const m = /^(-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?|true|false|null)/.exec(s.slice(i, i + 400));
  if (!m) throw new SyntaxError(`unexpected token at ${i}`);
  return i + m[0].length;
}

// Members of the object starting at i: [{key, start, end}] with raw value spans.
function members(s, i) {
  i = skipWs(s, i);
  if (s[i] !== '{') return null;
  const out = [];
  i = skipWs(s, i + 1);
  if (s[i] === '}') return out;
  for (;;) {
    const ks = skipWs(s, i);
    const ke = scanString(s, ks);
    const key = JSON.parse(s.slice(ks, ke));
    i = skipWs(s, ke);
    if (s[i] !== ':') throw new SyntaxError(`expected ':' at ${i}`);
    const vs = skipWs(s, i + 1);
    const ve = scanValue(s, vs);
    out.push({ key, start: vs, end: ve });
    i = skipWs(s, ve);
    if (s[i] === ',') { i++; continue; }
    if (s[i] === '}') return out;
    throw new SyntaxError(`expected ',' or '}' at ${i}`);
  }
}

export function rawValueAt(text, keys) {
  let start = 0;
  let end = text.length;
  for (const key of keys) {
    const ms = members(text.slice(0, end), start);
    if (!ms) return undefined;
    const hits = ms.filter((m) => m.key === key);
    if (hits.length !== 1) return undefined; // absent, or duplicated (ambiguous)
    start = hits[0].start;
    end = hits[0].end;
  }
  return text.slice(start, end);
}

export const rawId = (text) => rawValueAt(text, ['id']);

// Number of times `key` occurs as a member of the top-level object (duplicate-key detection).
export function countTopLevelKey(text, key) {
  const ms = members(text, 0);
  return ms ? ms.filter((m) => m.key === key).length : 0;
}
