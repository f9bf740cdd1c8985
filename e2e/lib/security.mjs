// Helpers of the security end-to-end suite (issue 18; docs/mcp.md §2.6, §5.6): the table of
// servers under test, secrets (static tokens, JWTs) that must never leak, token files, JWKS and
// JWT signing with node:crypto, SDK clients with a bearer token or stdio scopes, the audit CLI,
// and feature probes for the parts that land later.
//
// SECURITY_SERVERS has one row per server. Each row names the binary, the words before the
// policy flags (`mcp` for Librarian and WARDEN), an optional per-run setup (WARDEN needs a KB),
// a call that a `read` principal may make and whose answer is recognisable, the tools a `read`
// principal must not see, and an optional probe that returns a skip reason while the server
// lacks the policy flags. Adding a server is one row.

import { spawnSync } from 'node:child_process';
import http from 'node:http';
import { Readable } from 'node:stream';
import {
  createHash, generateKeyPairSync, randomBytes, sign as cryptoSign,
} from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { BUILD_DIR, REPO_ROOT, SERVER_BIN, withTimeout } from './env.mjs';
import { startHttpServer } from './http.mjs';
import { KODO_MCP, LIBRARIAN, WARDEN } from './servers.mjs';

// --- Time budget ---------------------------------------------------------------------------

// TROVE_SECURITY_SECONDS bounds the concurrency run (bench mode: 30). Unset (CI), it is 5 s.
export const SECURITY_SECONDS = (() => {
  const v = Number(process.env.TROVE_SECURITY_SECONDS);
  return Number.isFinite(v) && v > 0 ? v : 5;
})();
// Long waits (a 30 s breaker open time) run only when the budget allows them.
export const LONG_WAITS_OK = SECURITY_SECONDS >= 30;

// --- Secrets and leak collection ----------------------------------------------------------

const secrets = new Set();
const stderrSources = []; // {label, get: () => string}
const auditFiles = new Set();

// Returns a fresh random bearer token and remembers it as a secret.
export function newToken(label) {
  const t = `trove-sec-${label}-${randomBytes(16).toString('hex')}`;
  secrets.add(t);
  return t;
}

// Remembers a secret that was not made by newToken (a JWT): the whole text and, for a JWT, its
// signature part, which identifies it alone.
export function rememberSecret(text) {
  secrets.add(text);
  const parts = text.split('.');
  if (parts.length === 3 && parts[2].length >= 16) secrets.add(parts[2]);
}

export function collectStderr(label, get) { stderrSources.push({ label, get }); }
export function collectAuditLog(file) { auditFiles.add(file); }

// Asserts that no remembered secret occurs in any collected stderr or audit log. Returns what
// was searched, for the caller's message.
export function assertNoSecretsLeaked() {
  const texts = [];
  for (const s of stderrSources) texts.push([`stderr of ${s.label}`, s.get()]);
  for (const f of auditFiles) {
    if (existsSync(f)) texts.push([`audit log ${f}`, readFileSync(f, 'utf8')]);
  }
  for (const [where, text] of texts) {
    for (const s of secrets) {
      assert.ok(!text.includes(s), `a secret (${s.slice(0, 16)}...) appears in the ${where}`);
    }
  }
  return { secrets: secrets.size, sources: texts.length, bytes: texts.reduce((n, [, t]) => n + t.length, 0) };
}

// --- Token files, JWKS, JWT ---------------------------------------------------------------

export const sha256Hex = (s) => createHash('sha256').update(s).digest('hex');

// Writes a --token-file: entries {principal, scopes: ['read', ...], token}. Every other entry is
// stored as its sha256: digest, the others as the plain token (both forms are accepted).
export function writeTokenFile(file, entries) {
  const lines = ['# e2e security suite'];
  entries.forEach((e, i) => {
    const secret = i % 2 === 0 ? `sha256:${sha256Hex(e.token)}` : e.token;
    lines.push(`${e.principal} ${e.scopes.join(',')} ${secret}`);
  });
  writeFileSync(file, `${lines.join('\n')}\n`, { mode: 0o600 });
  return file;
}

const b64url = (buf) => Buffer.from(buf).toString('base64url');

// A signing key: {alg, kid, privateKey, publicJwk}. alg is 'RS256' or 'ES256'.
export function makeSigningKey(alg, kid = `${alg.toLowerCase()}-${randomBytes(4).toString('hex')}`) {
  const { privateKey, publicKey } = alg === 'RS256'
    ? generateKeyPairSync('rsa', { modulusLength: 2048 })
    : generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const publicJwk = { ...publicKey.export({ format: 'jwk' }), kid, use: 'sig', alg };
  return { alg, kid, privateKey, publicJwk };
}

export function writeJwks(file, keys) {
  writeFileSync(file, JSON.stringify({ keys: keys.map((k) => k.publicJwk) }));
  return file;
}

// Signs `claims` as a compact JWS with `key` (header alg/kid overridable for negative cases).
// The result is remembered as a secret.
export function signJwt(key, claims, { header = {} } = {}) {
  const h = { alg: key.alg, typ: 'at+jwt', kid: key.kid, ...header };
  const input = `${b64url(JSON.stringify(h))}.${b64url(JSON.stringify(claims))}`;
  const sig = key.alg === 'RS256'
    ? cryptoSign('sha256', Buffer.from(input), key.privateKey)
    : cryptoSign('sha256', Buffer.from(input), { key: key.privateKey, dsaEncoding: 'ieee-p1363' });
  const jwt = `${input}.${b64url(sig)}`;
  rememberSecret(jwt);
  return jwt;
}

// An unsigned token (alg none), for the refusal case.
export function unsignedJwt(claims) {
  const jwt = `${b64url(JSON.stringify({ alg: 'none', typ: 'JWT' }))}.${b64url(JSON.stringify(claims))}.`;
  secrets.add(jwt);
  return jwt;
}

export const nowSeconds = () => Math.floor(Date.now() / 1000);

// --- Feature probes -----------------------------------------------------------------------

const helpCache = new Map();

// Returns the --help text (stdout and stderr) of `bin ...words --help`, or '' when it fails.
export function helpText(bin, words = []) {
  const key = [bin, ...words].join('\0');
  if (!helpCache.has(key)) {
    if (!existsSync(bin)) {
      helpCache.set(key, '');
    } else {
      const r = spawnSync(bin, [...words, '--help'], { encoding: 'utf8', timeout: 20000 });
      helpCache.set(key, `${r.stdout ?? ''}${r.stderr ?? ''}`);
    }
  }
  return helpCache.get(key);
}

// Returns whether `relPath` (from the repository root) contains `needle`; used where a feature
// is internal wiring with no flag to see (e.g. a tool resolving client paths with ResolvePath).
export function sourceHas(relPath, needle) {
  const p = path.join(REPO_ROOT, relPath);
  return existsSync(p) && readFileSync(p, 'utf8').includes(needle);
}

// Feature probes for what lands on other branches. Each returns null when the feature is there,
// or the reason to skip.
export const FEATURES = {
  // Consent (policy-core): every server built on the core takes --consent.
  consent(row) {
    return /--consent\b/.test(helpText(row.bin, row.helpWords)) ? null
      : `${row.name}: --help lists no --consent flag (consent via elicitation is not merged yet)`;
  },
  // HTTP 403 insufficient_scope and 429 Retry-After (policy-core, same branch as consent).
  httpPolicyStatus(row) {
    return /--consent\b/.test(helpText(row.bin, row.helpWords)) ? null
      : `${row.name}: --help lists no --consent flag (the policy-core branch with HTTP 403/429 is not merged yet)`;
  },
  // Confinement of client paths (policy-servers): the tool sources call ctx.ResolvePath.
  confinement(row) {
    if (!row.confinedSource) return `${row.name}: takes no client paths`;
    return sourceHas(row.confinedSource, 'ResolvePath(') ? null
      : `${row.name}: ${row.confinedSource} does not call ResolvePath (confinement is not merged yet)`;
  },
};

// --- The servers under test ---------------------------------------------------------------

const KODO_SOURCE = (mod) => `module ${mod} {\n    meta { purpose: "e2e" }\n    fn main() -> Int {\n        return 42\n    }\n}\n`;

export const SECURITY_SERVERS = [
  {
    name: 'kodo',
    bin: KODO_MCP,
    helpWords: [],
    words: () => [],
    auditCli: [KODO_MCP, 'audit'],
    // Each call checks a module with a unique name, which the answer repeats.
    readCall: (tag) => ({ name: 'kodo.check', arguments: { source: KODO_SOURCE(`m_${tag}`) } }),
    checkRead: (r, tag) => assert.deepEqual(r.structuredContent, { errors: [], module: `m_${tag}`, status: 'ok' }),
    writeTools: [], // every Kōdo tool needs only read
  },
  {
    name: 'librarian',
    bin: LIBRARIAN,
    helpWords: ['mcp'],
    words: () => ['mcp'],
    auditCli: [LIBRARIAN, 'audit'],
    // `query` without a workspace is answered from an empty index; the tag is in the intent.
    readCall: (tag) => ({ name: 'query', arguments: { intent: `where is sec_${tag} handled` } }),
    checkRead: (r) => {
      assert.notEqual(r.isError, true, JSON.stringify(r).slice(0, 400));
      assert.equal(typeof r.structuredContent, 'object');
    },
    writeTools: ['bootstrap'],
    confinedSource: 'src/librarian/server/librarian_tools.cc',
  },
  {
    name: 'fixture',
    bin: SERVER_BIN,
    helpWords: [],
    words: () => [],
    auditCli: [KODO_MCP, 'audit'], // the fixture has no audit command; the core's is shared
    readCall: (tag) => ({ name: 'echo', arguments: { text: `echo-${tag}` } }),
    checkRead: (r, tag) => assert.deepEqual(r.structuredContent, { text: `echo-${tag}` }),
    writeTools: ['slow'],
  },
  {
    name: 'warden',
    bin: WARDEN,
    helpWords: ['mcp'],
    // `warden mcp` needs a KB: an empty one from `warden init`.
    setup(dir) {
      const proj = path.join(dir, 'warden-proj');
      mkdirSync(proj, { recursive: true });
      const r = spawnSync(WARDEN, ['init', '--project', 'sec'], { cwd: proj, encoding: 'utf8', timeout: 60000 });
      if (r.status !== 0) throw new Error(`warden init: ${r.stderr}`);
      return { db: path.join(proj, '.warden', 'warden.db') };
    },
    words: (ctx) => ['mcp', '--db', ctx.db],
    auditCli: [WARDEN, 'audit'],
    readCall: () => ({ name: 'list_versions', arguments: {} }),
    checkRead: (r) => assert.deepEqual(r.structuredContent, { versions: [] }),
    writeTools: ['propose_symbol'],
    // warden mcp takes the policy flags only once the policy-servers branch is merged.
    probe() {
      return /--auth\b/.test(helpText(WARDEN, ['mcp'])) ? null
        : 'warden mcp --help lists no --auth (the policy flags for warden mcp are not merged yet)';
    },
  },
];

export function serverRow(name) {
  const row = SECURITY_SERVERS.find((r) => r.name === name);
  if (!row) throw new Error(`no server row ${name}`);
  return row;
}

// The reason to skip a row (binary missing, or its probe), or null.
export function rowSkipReason(row) {
  if (!existsSync(row.bin)) return `${row.bin} is not built (TROVE_BUILD_DIR=${BUILD_DIR})`;
  return row.probe ? row.probe() : null;
}

// --- Starting servers and clients ---------------------------------------------------------

// Starts `row` over HTTP with the policy flags `flags`; its stderr is collected for the leak
// check.
export async function startRowHttp(row, ctx, flags, label) {
  const srv = await startHttpServer(flags, { bin: row.bin, command: row.words(ctx) });
  collectStderr(`${row.name} ${label} (http)`, () => srv.stderr);
  return srv;
}

// A fetch for the SDK transport over node:http with one connection per request, closed after
// it. With the global fetch, idle keep-alive connections stay open after client.close() and a
// server's shutdown waits for them to time out (several seconds per server).
export function closingFetch(url, init = {}) {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const headers = Object.fromEntries(new Headers(init.headers ?? {}).entries());
    headers.connection = 'close';
    const body = init.body === undefined || init.body === null ? undefined : Buffer.from(init.body);
    if (body) headers['content-length'] = String(body.length);
    const req = http.request({
      host: u.hostname, port: u.port, path: u.pathname + u.search, method: init.method ?? 'GET', headers,
      agent: false, signal: init.signal ?? undefined,
    });
    req.on('response', (res) => {
      const h = new Headers();
      for (const [k, v] of Object.entries(res.headers)) h.set(k, Array.isArray(v) ? v.join(', ') : String(v));
      const empty = [101, 204, 205, 304].includes(res.statusCode) || req.method === 'HEAD';
      if (empty) res.resume();
      resolve(new Response(empty ? null : Readable.toWeb(res), { status: res.statusCode, statusText: res.statusMessage, headers: h }));
    });
    req.on('error', reject);
    if (body) req.write(body);
    req.end();
  });
}

// Stops an HTTP server started by startRowHttp and asserts that it exited cleanly on SIGTERM
// (exit 0, not killed): only then has the audit writer flushed every record.
export async function stopClean(srv) {
  const ex = await srv.stop();
  assert.deepEqual(ex, { code: 0, signal: null }, `server exit after SIGTERM: ${JSON.stringify(ex)}; stderr: ${srv.stderr.slice(-500)}`);
}

// Returns an SDK client connected over Streamable HTTP with `token` as bearer (none: no
// header). `onElicit(params)`, when given, declares elicitation and answers with its result.
export async function sdkHttpClient(url, token, { onElicit, name = 'trove-e2e-security' } = {}) {
  const client = new Client({ name, version: '0.0.0' }, { capabilities: onElicit ? { elicitation: {} } : {} });
  if (onElicit) client.setRequestHandler(ElicitRequestSchema, async (req) => onElicit(req.params));
  const headers = token ? { Authorization: `Bearer ${token}` } : {};
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers }, fetch: closingFetch });
  await withTimeout(client.connect(transport), 10000, `SDK connect to ${url}`);
  return { client, transport };
}

// Returns an SDK client that started `row` over stdio with `env` added (TROVE_PRINCIPAL,
// TROVE_SCOPES) and `flags` after the row's words. Its stderr is collected.
export async function sdkStdioClient(row, ctx, { env = {}, flags = [], onElicit, label = 'stdio', cwd } = {}) {
  const client = new Client({ name: 'trove-e2e-security', version: '0.0.0' },
    { capabilities: onElicit ? { elicitation: {} } : {} });
  if (onElicit) client.setRequestHandler(ElicitRequestSchema, async (req) => onElicit(req.params));
  const base = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp' };
  const transport = new StdioClientTransport({
    command: row.bin, args: [...row.words(ctx), ...flags], env: { ...base, ...env }, stderr: 'pipe', cwd,
  });
  let stderr = '';
  transport.stderr?.on('data', (c) => { stderr += c.toString('utf8'); });
  collectStderr(`${row.name} ${label} (stdio)`, () => stderr);
  await withTimeout(client.connect(transport), 10000, `SDK stdio connect to ${row.name}`);
  return { client, transport, stderr: () => stderr };
}

// The policy error of a tool result (_meta["trove/error"]), asserting it is there.
export function trovError(result, what = '') {
  assert.equal(result.isError, true, `${what}: not an error: ${JSON.stringify(result).slice(0, 400)}`);
  const e = result._meta?.['trove/error'];
  assert.ok(e && typeof e === 'object', `${what}: no _meta["trove/error"]: ${JSON.stringify(result).slice(0, 400)}`);
  return e;
}

// Awaits a tools/call that policy refuses and returns how: {http: 200, error} for an isError
// result (error = its _meta["trove/error"]), or {http: 403|429|..., text} when the HTTP layer
// answered with that status instead (the SDK throws StreamableHTTPError then). docs/mcp.md
// §5.6 allows both shapes for HTTP, so tests that are not about the HTTP status accept both
// and check the status where it matters.
export async function refusalOf(promise, what = '') {
  const o = await outcomeOf(promise);
  if (o.http === 200) trovError(o.result, what);
  return o;
}

// Like refusalOf, without requiring a refusal: {http: 200, result, error (or undefined)}.
export async function outcomeOf(promise) {
  let r;
  try {
    r = await promise;
  } catch (e) {
    if (e instanceof StreamableHTTPError && e.code >= 400) return { http: e.code, text: e.message };
    throw e;
  }
  return { http: 200, result: r, error: r.isError === true ? r._meta?.['trove/error'] : undefined };
}

// --- Client paths ---

// A workspace for bootstrap: one small C file.
export function makeWorkspace(dir) {
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'main.c'), 'int add(int a, int b) { return a + b; }\nint main(void) { return add(1, 2); }\n');
  return dir;
}

// The corpus for root `root`, with `outside` a real directory next to it and `root/link-out`
// a symlink to it. Every entry must be refused.
export function traversalCorpus(root, outside) {
  const out = path.basename(outside);
  return [
    '..', '../', `../${out}`, 'ws/../../', `ws/../../${out}`, `${root}/..`, `${root}/../${out}`,
    `${root}/ws/../../${out}`, './../.', '%2e%2e', '%2e%2e/%2e%2e/etc', '..%2f..%2fetc', '%252e%252e%252f',
    `..\\..\\${out}`, `ws\\..\\..\\${out}`, outside, '/etc', '/', '/tmp', `${outside}/`,
    `${root}/link-out`, `${root}/link-out/sub`, 'link-out', 'link-out/sub',
    `${root}/ws\u0000`, 'ws\u0000/../..', '\u0000', `${root}/${'a'.repeat(5000)}`, 'b'.repeat(5000),
  ];
}

export function makeTraversalRoot(base) {
  const root = path.join(base, 'root');
  const outside = path.join(base, 'outside');
  makeWorkspace(path.join(root, 'ws'));
  makeWorkspace(path.join(outside, 'sub'));
  symlinkSync(outside, path.join(root, 'link-out'));
  return { root, outside };
}

// --- Audit log ----------------------------------------------------------------------------

export function readAuditRecords(file) {
  return readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

// Runs `<row audit CLI> ...args`; returns {code, stdout, stderr}.
export function runAudit(row, args) {
  const [bin, ...words] = row.auditCli;
  const r = spawnSync(bin, [...words, ...args], { encoding: 'utf8', timeout: 30000 });
  return { code: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}
