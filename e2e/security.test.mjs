// Security end to end (issue 18; docs/mcp.md §2.6, §5.6): for every server of
// SECURITY_SERVERS (kodo-mcp, `librarian mcp`, the fixture server and, once its policy flags are
// merged, `warden mcp`), through the real binaries and the official SDK client:
//   - static bearer tokens over HTTP: no or a bad token is 401 with WWW-Authenticate, another
//     principal's session is 404;
//   - scopes: a `read` principal neither sees nor may call a write tool (PERMISSION_DENIED), a
//     principal without `read` is refused the read tools; over stdio the same with TROVE_SCOPES;
//   - rate limit 60/min, burst 20: 20 calls pass, the 21st is RATE_LIMIT_EXCEEDED (retryable,
//     retryDelayMs), and after retryDelayMs a call passes;
//   - oauth: RS256 and ES256 JWTs made here against a JWKS file; wrong aud, expired, wrong iss,
//     unknown key and alg none are 401; good tokens work; both Protected Resource Metadata paths;
//   - audit log: one tool_call record per call with the principal; `audit verify` accepts it
//     and names the record after an edit or a deletion; `audit stats --json` has the §5.6 fields;
//   - finally, no token or JWT text in any server's stderr or audit log.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { httpRequest, HttpSession, ACCEPT_BOTH } from './lib/http.mjs';
import { INIT_PARAMS } from './lib/jsonrpc.mjs';
import { sleep } from './lib/env.mjs';
import {
  SECURITY_SERVERS, rowSkipReason, newToken, writeTokenFile, makeSigningKey, writeJwks, signJwt,
  unsignedJwt, nowSeconds, startRowHttp, sdkHttpClient, sdkStdioClient, trovError,
  readAuditRecords, runAudit, collectAuditLog, assertNoSecretsLeaked, sha256Hex, stopClean, refusalOf, outcomeOf,
  serverRow, traversalCorpus, makeTraversalRoot,
} from './lib/security.mjs';

// A refusal over HTTP: an isError result with `code`, or (once the HTTP layer maps policy
// errors to statuses, docs/mcp.md §5.6) the HTTP status `status`; anything else fails.
function assertRefused(ref, code, status, what) {
  if (ref.http === 200) {
    assert.equal(ref.error.code, code, `${what}: ${JSON.stringify(ref.error)}`);
  } else {
    assert.equal(ref.http, status, `${what}: HTTP ${ref.http} ${ref.text?.slice(0, 200)}`);
  }
}

const ROOT = mkdtempSync(path.join(tmpdir(), 'trove-security-'));
after(() => rmSync(ROOT, { recursive: true, force: true }));

const JSON_HEADERS = { 'Content-Type': 'application/json', Accept: ACCEPT_BOTH };
const INIT_BODY = { jsonrpc: '2.0', id: 0, method: 'initialize', params: INIT_PARAMS('2025-11-25') };
const ISSUER = 'https://as.trove-e2e.example';
const RESOURCE = 'https://mcp.trove-e2e.example/mcp';
const METADATA_URL = 'https://mcp.trove-e2e.example/.well-known/oauth-protected-resource/mcp';

// Static principals of the token file (scopes in the file; `calls` counts the tools/call
// requests made with each token, for the audit check).
const PRINCIPALS = {
  admin: ['admin'],
  writer: ['read', 'write'],
  reader: ['read'],
  noread: ['network'],
  burst: ['read'],
  owner: ['read'],
  intruder: ['read'],
};

for (const row of SECURITY_SERVERS) {
  describe(`security: ${row.name}`, () => {
    const skip = rowSkipReason(row);
    if (skip) {
      test(`${row.name}: every security test`, (t) => t.skip(skip));
      return;
    }
    const dir = path.join(ROOT, row.name);
    const tokens = {};
    const calls = {};
    let ctx;
    let srv;
    let auditFile;

    // A tools/call through the SDK, counted for the audit check.
    const call = (client, principal, params) => {
      calls[principal] = (calls[principal] ?? 0) + 1;
      return client.callTool(params);
    };
    const clients = [];
    const connect = async (principal) => {
      const c = await sdkHttpClient(srv.url, tokens[principal]);
      clients.push(c);
      return c.client;
    };

    before(async () => {
      mkdirSync(dir, { recursive: true });
      ctx = row.setup ? row.setup(dir) : {};
      for (const p of Object.keys(PRINCIPALS)) tokens[p] = newToken(`${row.name}-${p}`);
      const tokenFile = writeTokenFile(path.join(dir, 'tokens.txt'),
        Object.entries(PRINCIPALS).map(([principal, scopes]) => ({ principal, scopes, token: tokens[principal] })));
      auditFile = path.join(dir, 'audit-static.jsonl');
      collectAuditLog(auditFile);
      srv = await startRowHttp(row, ctx, ['--auth', 'static', '--token-file', tokenFile, '--audit-log', auditFile,
        '--rate-limit', '60/min', '--burst', '20', '--log-level', 'debug'], 'static');
    });
    after(async () => {
      for (const c of clients) await c.client.close().catch(() => {});
      if (srv) await srv.stop();
    });

    test('no token or a bad token: 401 with WWW-Authenticate: Bearer; the SDK client cannot connect', { timeout: 30000 }, async () => {
      const wrong = newToken(`${row.name}-wrong`);
      for (const auth of [undefined, `Bearer ${wrong}`, `Bearer ${tokens.reader}x`, `Basic ${Buffer.from(`u:${tokens.reader}`).toString('base64')}`]) {
        const headers = { ...JSON_HEADERS };
        if (auth !== undefined) headers.Authorization = auth;
        const r = await httpRequest(srv.url, { headers, body: INIT_BODY });
        assert.equal(r.status, 401, `Authorization ${auth === undefined ? '(none)' : auth.split(' ')[0]} -> ${r.status} ${r.text.slice(0, 200)}`);
        assert.match(r.headers['www-authenticate'] ?? '', /^Bearer\b/, `WWW-Authenticate: ${r.headers['www-authenticate']}`);
        if (auth !== undefined && auth.startsWith('Bearer')) {
          assert.match(r.headers['www-authenticate'], /error="invalid_token"/);
        }
        assert.equal(r.headers['mcp-session-id'], undefined);
        assert.ok(!r.text.includes(tokens.reader) && !r.text.includes(wrong), 'a token is echoed in the body');
      }
      await assert.rejects(sdkHttpClient(srv.url, undefined), 'the SDK connected without a token');
      await assert.rejects(sdkHttpClient(srv.url, wrong), 'the SDK connected with a bad token');
    });

    test("token B cannot use token A's session (404); A's session is untouched", { timeout: 30000 }, async () => {
      const a = new HttpSession(srv.url, { headers: { Authorization: `Bearer ${tokens.owner}` } });
      await a.initialize();
      const b = new HttpSession(srv.url, { headers: { Authorization: `Bearer ${tokens.intruder}` } });
      b.sessionId = a.sessionId;
      b.protocolVersion = a.protocolVersion;
      const stolen = await b.request('tools/call', row.readCall('stolen'));
      assert.equal(stolen.status, 404, `tools/call with another principal's session -> ${stolen.status} ${stolen.text.slice(0, 200)}`);
      assert.equal((await b.request('tools/list')).status, 404);
      assert.equal((await b.delete()).status, 404);
      calls.owner = (calls.owner ?? 0) + 1;
      const mine = await a.request('tools/call', row.readCall('owner'));
      assert.equal(mine.status, 200);
      assert.ok(mine.msg?.result, mine.text.slice(0, 300));
      row.checkRead?.(mine.msg.result, 'owner');
      assert.equal((await a.delete()).status, 200);
    });

    test('a read-only principal neither sees nor may call the write tools (PERMISSION_DENIED); a writer sees them', { timeout: 30000 }, async () => {
      const admin = await connect('admin');
      const reader = await connect('reader');
      const writer = await connect('writer');
      const all = (await admin.listTools()).tools.map((t) => t.name);
      const readable = (await reader.listTools()).tools.map((t) => t.name);
      const writable = (await writer.listTools()).tools.map((t) => t.name);
      assert.ok(readable.includes(row.readCall('x').name), `${row.readCall('x').name} is not listed for read: ${readable}`);
      for (const w of row.writeTools) {
        assert.ok(all.includes(w), `${w} is not listed for admin: ${all}`);
        assert.ok(writable.includes(w), `${w} is not listed for a read,write principal: ${writable}`);
        assert.ok(!readable.includes(w), `${w} is listed for a read-only principal`);
      }
      for (const n of readable) assert.ok(all.includes(n), `${n} is listed for read but not for admin`);
      const hidden = all.filter((n) => !readable.includes(n));
      assert.deepEqual(hidden.filter((n) => row.writeTools.includes(n)).sort(), [...row.writeTools].sort());
      // Every tool hidden from the reader is refused to it, before anything runs.
      for (const name of hidden) {
        const ref = await refusalOf(call(reader, 'reader', { name, arguments: {} }), `${name} called by read`);
        assertRefused(ref, 'PERMISSION_DENIED', 403, `${name} called by read`);
        if (ref.http === 200) assert.equal(ref.error.retryable, false);
      }
      const ok = await call(reader, 'reader', row.readCall('reader'));
      assert.notEqual(ok.isError, true, JSON.stringify(ok).slice(0, 400));
      row.checkRead?.(ok, 'reader');
    });

    test('a principal without read is refused the read tools and does not see them', { timeout: 30000 }, async () => {
      const noread = await connect('noread');
      const listed = (await noread.listTools()).tools.map((t) => t.name);
      const readName = row.readCall('x').name;
      assert.ok(!listed.includes(readName), `${readName} is listed for a principal with only network`);
      for (const w of row.writeTools) assert.ok(!listed.includes(w), `${w} is listed for a principal with only network`);
      if (row.writeTools.length === 0 && row.name === 'kodo') {
        assert.deepEqual(listed, [], 'every Kōdo tool needs read, so none may be listed');
      }
      const ref = await refusalOf(call(noread, 'noread', row.readCall('noread')), 'read tool without read');
      assertRefused(ref, 'PERMISSION_DENIED', 403, 'read tool without read');
    });

    test('rate limit 60/min, burst 20: 20 calls pass, the 21st is retryable RATE_LIMIT_EXCEEDED, and passes after retryDelayMs', { timeout: 30000 }, async () => {
      const c = await connect('burst');
      const t0 = Date.now();
      const burst = await Promise.all(Array.from({ length: 20 }, (_, i) => call(c, 'burst', row.readCall(`b${i}`))));
      burst.forEach((r, i) => {
        assert.notEqual(r.isError, true, `burst call ${i + 1}: ${JSON.stringify(r).slice(0, 300)}`);
        row.checkRead?.(r, `b${i}`);
      });
      // The bucket refills one token a second: on a slow machine a call or two more may pass
      // before the first refusal, never more than the time taken allows.
      let limited;
      let extra = 0;
      for (;;) {
        const ref = await outcomeOf(call(c, 'burst', row.readCall(`x${extra}`)));
        if (ref.http === 200 && ref.result.isError !== true) {
          const allowed = Math.floor((Date.now() - t0) / 1000);
          extra++;
          assert.ok(extra <= allowed, `${20 + extra} calls passed in ${Date.now() - t0} ms (burst 20 + 1/s)`);
          continue;
        }
        limited = ref;
        break;
      }
      assertRefused(limited, 'RATE_LIMIT_EXCEEDED', 429, `call ${21 + extra} after ${Date.now() - t0} ms`);
      let delay = 1000; // a 429 says Retry-After: 1 (the gated test checks the header)
      if (limited.http === 200) {
        const e = limited.error;
        assert.equal(e.category, 'rate_limit');
        assert.equal(e.retryable, true);
        assert.ok(Number.isInteger(e.retryDelayMs) && e.retryDelayMs > 0 && e.retryDelayMs <= 1000,
          `retryDelayMs ${e.retryDelayMs} (one token at 60/min takes at most 1000 ms)`);
        delay = e.retryDelayMs;
      }
      await sleep(delay + 20);
      const again = await call(c, 'burst', row.readCall('b21'));
      assert.notEqual(again.isError, true, `after retryDelayMs: ${JSON.stringify(again).slice(0, 300)}`);
      row.checkRead?.(again, 'b21');
    });

    test('stdio: TROVE_SCOPES=read hides and refuses the write tools; no scopes refuses the read tool; the audit log names TROVE_PRINCIPAL', { timeout: 30000 }, async () => {
      const stdioAudit = path.join(dir, 'audit-stdio.jsonl');
      collectAuditLog(stdioAudit);
      const reader = await sdkStdioClient(row, ctx, { env: { TROVE_PRINCIPAL: 'stdio-reader', TROVE_SCOPES: 'read' }, flags: ['--audit-log', stdioAudit], label: 'read' });
      try {
        const listed = (await reader.client.listTools()).tools.map((t) => t.name);
        assert.ok(listed.includes(row.readCall('x').name));
        for (const w of row.writeTools) {
          assert.ok(!listed.includes(w), `${w} is listed over stdio for TROVE_SCOPES=read`);
          const r = await reader.client.callTool({ name: w, arguments: {} });
          assert.equal(trovError(r, `${w} over stdio`).code, 'PERMISSION_DENIED');
        }
        const ok = await reader.client.callTool(row.readCall('stdio'));
        assert.notEqual(ok.isError, true, JSON.stringify(ok).slice(0, 300));
        row.checkRead?.(ok, 'stdio');
      } finally {
        await reader.client.close();
      }
      const records = readAuditRecords(stdioAudit).filter((r) => r.type === 'tool_call');
      assert.equal(records.length, row.writeTools.length + 1, JSON.stringify(records));
      for (const r of records) assert.equal(r.principal, 'stdio-reader');
      assert.equal(records.filter((r) => r.status === 'denied').length, row.writeTools.length);

      const none = await sdkStdioClient(row, ctx, { env: { TROVE_PRINCIPAL: 'stdio-none', TROVE_SCOPES: '' }, label: 'no scopes' });
      try {
        const listed = (await none.client.listTools()).tools.map((t) => t.name);
        assert.ok(!listed.includes(row.readCall('x').name), `listed with no scopes: ${listed}`);
        if (row.name === 'kodo') assert.deepEqual(listed, []);
        const r = await none.client.callTool(row.readCall('none'));
        assert.equal(trovError(r, 'read tool with no scopes').code, 'PERMISSION_DENIED');
      } finally {
        await none.client.close();
      }
    });

    test('audit: one tool_call record per call with its principal; verify ok; an edit or a deletion is named; stats --json', { timeout: 30000 }, async () => {
      for (const c of clients.splice(0)) await c.client.close().catch(() => {});
      await stopClean(srv); // the writer flushes at exit
      const records = readAuditRecords(auditFile);
      const toolCalls = records.filter((r) => r.type === 'tool_call');
      const byPrincipal = {};
      for (const r of toolCalls) byPrincipal[r.principal] = (byPrincipal[r.principal] ?? 0) + 1;
      assert.deepEqual(byPrincipal, calls, 'tool_call records per principal vs calls made');
      for (const r of toolCalls) {
        assert.match(r.tokenId ?? '', /^[0-9a-f]{12}$/, JSON.stringify(r));
        assert.equal(r.tokenId, sha256Hex(tokens[r.principal]).slice(0, 12), `tokenId of ${r.principal}`);
        assert.match(r.sessionId ?? '', /^[0-9a-f]{32}$/);
        assert.match(r.arguments?.sha256 ?? '', /^[0-9a-f]{64}$/);
        assert.ok(!('source' in r) && !JSON.stringify(r).includes('m_b1'), 'argument values in the audit log');
      }
      const limited = toolCalls.filter((r) => r.errorCode === 'RATE_LIMIT_EXCEEDED');
      assert.equal(limited.length, 1);
      assert.equal(limited[0].status, 'denied');
      assert.equal(limited[0].principal, 'burst');
      assert.ok(toolCalls.filter((r) => r.errorCode === 'PERMISSION_DENIED').every((r) => r.status === 'denied'));

      const ok = runAudit(row, ['verify', auditFile]);
      assert.equal(ok.code, 0, `audit verify: ${ok.stdout}${ok.stderr}`);
      assert.match(ok.stdout, new RegExp(`ok, ${records.length} records`));

      // One byte changed in a middle record: the chain breaks at the record after it.
      const lines = readFileSync(auditFile, 'utf8').split('\n').filter(Boolean);
      assert.ok(lines.length >= 5, `only ${lines.length} records`);
      const k = Math.floor(lines.length / 2); // 0-based: line k + 1
      const edited = path.join(dir, 'audit-edited.jsonl');
      // The last digit of its timestamp: the record stays well-formed, only its hash changes.
      const at = lines[k].indexOf('Z"') - 1;
      assert.match(lines[k][at] ?? '', /[0-9]/, lines[k]);
      const changed = [...lines];
      changed[k] = lines[k].slice(0, at) + String((Number(lines[k][at]) + 1) % 10) + lines[k].slice(at + 1);
      writeFileSync(edited, `${changed.join('\n')}\n`);
      const e = runAudit(row, ['verify', edited]);
      assert.equal(e.code, 1, `verify of an edited log: ${e.stdout}${e.stderr}`);
      assert.ok(e.stdout.startsWith(`${edited}:${k + 2}: `), `not naming record ${k + 2}: ${e.stdout}`);
      const ej = JSON.parse(runAudit(row, ['verify', edited, '--json']).stdout);
      assert.equal(ej.ok, false);
      assert.equal(ej.line, k + 2);
      assert.equal(ej.records, k + 1);

      // A middle record deleted: the record after the gap is named.
      const deleted = path.join(dir, 'audit-deleted.jsonl');
      writeFileSync(deleted, `${lines.filter((_, i) => i !== k).join('\n')}\n`);
      const d = runAudit(row, ['verify', deleted]);
      assert.equal(d.code, 1, `verify of a log with a deleted record: ${d.stdout}${d.stderr}`);
      assert.ok(d.stdout.startsWith(`${deleted}:${k + 1}: `), `not naming record ${k + 1}: ${d.stdout}`);

      // The first record deleted.
      const headless = path.join(dir, 'audit-headless.jsonl');
      writeFileSync(headless, `${lines.slice(1).join('\n')}\n`);
      const h = runAudit(row, ['verify', headless]);
      assert.equal(h.code, 1);
      assert.ok(h.stdout.startsWith(`${headless}:1: `), h.stdout);

      // The untouched copy still verifies (the checks above did not read a stale file).
      const copy = path.join(dir, 'audit-copy.jsonl');
      copyFileSync(auditFile, copy);
      assert.equal(runAudit(row, ['verify', copy]).code, 0);

      const s = runAudit(row, ['stats', auditFile, '--json']);
      assert.equal(s.code, 0, s.stderr);
      const stats = JSON.parse(s.stdout);
      for (const f of ['totalEvents', 'byType', 'byStatus', 'uniqueSessions', 'avgToolDurationMs', 'errorRate']) {
        assert.ok(f in stats, `stats --json lacks ${f}: ${s.stdout}`);
      }
      assert.equal(stats.totalEvents, records.length);
      assert.equal(stats.byType.tool_call, toolCalls.length);
      const statusCount = {};
      for (const r of records) statusCount[r.status] = (statusCount[r.status] ?? 0) + 1;
      assert.deepEqual(stats.byStatus, statusCount);
      assert.equal(stats.uniqueSessions, new Set(records.map((r) => r.sessionId).filter(Boolean)).size);
      assert.equal(typeof stats.avgToolDurationMs, 'number');
      assert.ok(stats.errorRate >= 0 && stats.errorRate <= 100);
      assert.equal(runAudit(row, ['verify', path.join(dir, 'no-such.jsonl')]).code, 2);
    });
  });

  describe(`security: ${row.name} with --auth oauth (JWT)`, () => {
    const skip = rowSkipReason(row);
    if (skip) {
      test(`${row.name}: every oauth test`, (t) => t.skip(skip));
      return;
    }
    const dir = path.join(ROOT, `${row.name}-oauth`);
    let srv;
    let rs;
    let es;
    let stranger;
    let auditFile;
    const clients = [];
    const claims = (over = {}) => ({
      iss: ISSUER, aud: RESOURCE, sub: 'jwt-user', scope: 'read', iat: nowSeconds(), exp: nowSeconds() + 600, ...over,
    });

    before(async () => {
      mkdirSync(dir, { recursive: true });
      const ctx = row.setup ? row.setup(dir) : {};
      rs = makeSigningKey('RS256');
      es = makeSigningKey('ES256');
      stranger = makeSigningKey('RS256', rs.kid); // same kid, not in the JWKS
      const jwks = writeJwks(path.join(dir, 'jwks.json'), [rs, es]);
      auditFile = path.join(dir, 'audit-oauth.jsonl');
      collectAuditLog(auditFile);
      srv = await startRowHttp(row, ctx, ['--auth', 'oauth', '--jwks-file', jwks, '--issuer', ISSUER,
        '--resource', RESOURCE, '--audit-log', auditFile, '--log-level', 'debug'], 'oauth');
    });
    after(async () => {
      for (const c of clients) await c.client.close().catch(() => {});
      if (srv) await srv.stop();
    });

    test('Protected Resource Metadata at both well-known paths', { timeout: 20000 }, async () => {
      for (const p of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) {
        const r = await httpRequest(`${srv.origin}${p}`, { method: 'GET', headers: { Accept: 'application/json' } });
        assert.equal(r.status, 200, `${p} -> ${r.status}`);
        assert.equal(r.contentType, 'application/json');
        const doc = JSON.parse(r.text);
        assert.equal(doc.resource, RESOURCE);
        assert.ok(Array.isArray(doc.authorization_servers) && doc.authorization_servers.includes(ISSUER), r.text);
        assert.ok(Array.isArray(doc.scopes_supported), r.text);
        for (const s of ['read', 'write', 'execute', 'network', 'admin']) assert.ok(doc.scopes_supported.includes(s), `${s} not in scopes_supported`);
        assert.deepEqual(doc.bearer_methods_supported, ['header']);
      }
    });

    test('no token: 401 with resource_metadata and scope in WWW-Authenticate', { timeout: 20000 }, async () => {
      const r = await httpRequest(srv.url, { headers: JSON_HEADERS, body: INIT_BODY });
      assert.equal(r.status, 401);
      const h = r.headers['www-authenticate'] ?? '';
      assert.match(h, /^Bearer\b/);
      assert.ok(h.includes(`resource_metadata="${METADATA_URL}"`), h);
      assert.match(h, /scope="[a-z ]+"/);
    });

    test('wrong aud, expired, not yet valid, wrong iss, unknown key, alg none: 401 invalid_token', { timeout: 20000 }, async () => {
      const bad = {
        'wrong aud': signJwt(rs, claims({ aud: 'https://other.example/mcp' })),
        'wrong aud (ES256)': signJwt(es, claims({ aud: ['https://other.example/mcp'] })),
        expired: signJwt(rs, claims({ exp: nowSeconds() - 3600, iat: nowSeconds() - 7200 })),
        'expired (ES256)': signJwt(es, claims({ exp: nowSeconds() - 3600 })),
        'not yet valid': signJwt(es, claims({ nbf: nowSeconds() + 3600 })),
        'wrong iss': signJwt(rs, claims({ iss: 'https://evil.example' })),
        'no exp': signJwt(rs, (({ exp, ...c }) => c)(claims())),
        'signed by a key not in the JWKS': signJwt(stranger, claims()),
        'alg none': unsignedJwt(claims()),
        'RS256 header on an ES256 signature': signJwt(es, claims(), { header: { alg: 'RS256', kid: rs.kid } }),
      };
      for (const [what, jwt] of Object.entries(bad)) {
        const r = await httpRequest(srv.url, { headers: { ...JSON_HEADERS, Authorization: `Bearer ${jwt}` }, body: INIT_BODY });
        assert.equal(r.status, 401, `${what} -> ${r.status} ${r.text.slice(0, 200)}`);
        assert.match(r.headers['www-authenticate'] ?? '', /error="invalid_token"/, `${what}: ${r.headers['www-authenticate']}`);
        assert.ok(!r.text.includes(jwt.split('.')[2] || jwt), `${what}: the token is echoed`);
      }
      await assert.rejects(sdkHttpClient(srv.url, bad.expired), 'the SDK connected with an expired token');
    });

    test('good RS256 and ES256 tokens are accepted; tools/list follows the scope claim; the audit names sub', { timeout: 30000 }, async () => {
      const subs = [];
      for (const [key, scope] of [[rs, 'read'], [es, 'read'], [rs, 'read write'], [es, 'admin']]) {
        const sub = `jwt-${key.alg}-${scope.replace(' ', '-')}`;
        const c = await sdkHttpClient(srv.url, signJwt(key, claims({ sub, scope })));
        clients.push(c);
        const listed = (await c.client.listTools()).tools.map((t) => t.name);
        assert.ok(listed.includes(row.readCall('x').name), `${sub}: ${listed}`);
        const canWrite = scope !== 'read';
        for (const w of row.writeTools) assert.equal(listed.includes(w), canWrite, `${sub}: ${w} listed=${listed.includes(w)}`);
        const r = await c.client.callTool(row.readCall(sub.replace(/[^a-z0-9]/gi, '_')));
        assert.notEqual(r.isError, true, `${sub}: ${JSON.stringify(r).slice(0, 300)}`);
        row.checkRead?.(r, sub.replace(/[^a-z0-9]/gi, '_'));
        subs.push(sub);
      }
      // A token whose scope claim names nothing this server knows grants nothing.
      const none = await sdkHttpClient(srv.url, signJwt(es, claims({ sub: 'jwt-noscope', scope: 'profile email' })));
      clients.push(none);
      const listed = (await none.client.listTools()).tools.map((t) => t.name);
      assert.ok(!listed.includes(row.readCall('x').name), `listed for a token without scopes: ${listed}`);
      if (row.name === 'kodo') assert.deepEqual(listed, []);

      for (const c of clients.splice(0)) await c.client.close().catch(() => {});
      await stopClean(srv);
      const records = readAuditRecords(auditFile).filter((r) => r.type === 'tool_call');
      assert.deepEqual(records.map((r) => r.principal).sort(), [...subs].sort());
      assert.equal(runAudit(row, ['verify', auditFile]).code, 0);
    });
  });
}

// Kōdo takes source text, never a path: kodo.check's `filename` is a label that is never opened
// (docs/kodo.md §3.3). So the traversal corpus in `filename` changes nothing, over stdio (root:
// the cwd) and over HTTP without --allow-root (where every client path would be refused), and a
// file outside the root that the path names is not read.
describe('confinement: Kōdo takes no paths', () => {
  const row = serverRow('kodo');
  const skip = rowSkipReason(row);
  for (const mode of ['stdio', 'http']) {
    test(`${mode}: no tool takes a path argument; the traversal corpus in filename changes no answer`, { timeout: 30000 }, async (t) => {
      if (skip) { t.skip(skip); return; }
      const base = mkdtempSync(path.join(ROOT, `kodo-paths-${mode}-`));
      const { root, outside } = makeTraversalRoot(base);
      // What a server that opened `filename` would read instead of `source`.
      writeFileSync(path.join(outside, 'leak.ko'), 'module leaked {\n    fn main() -> Int {\n        return nope\n    }\n}\n');
      let srv;
      let c;
      try {
        if (mode === 'stdio') {
          c = await sdkStdioClient(row, {}, { cwd: root, label: 'paths' });
        } else {
          srv = await startRowHttp(row, {}, [], 'paths');
          c = await sdkHttpClient(srv.url, undefined);
        }
        for (const tool of (await c.client.listTools()).tools) {
          for (const prop of Object.keys(tool.inputSchema?.properties ?? {})) {
            assert.ok(['source', 'code', 'filename'].includes(prop), `${tool.name} takes ${prop}: if it is a path, it must be confined (CallContext::ResolvePath) and tested here`);
          }
        }
        const params = row.readCall('paths');
        const expected = await c.client.callTool(params);
        row.checkRead(expected, 'paths');
        const corpus = [...traversalCorpus(root, outside), path.join(outside, 'leak.ko'), `../outside/leak.ko`, 'link-out/leak.ko'];
        for (const filename of corpus) {
          const r = await c.client.callTool({ name: params.name, arguments: { ...params.arguments, filename } });
          assert.deepEqual(r, expected, `filename ${JSON.stringify(filename).slice(0, 60)} changed the answer`);
        }
      } finally {
        await c?.client.close().catch(() => {});
        if (srv) await srv.stop();
      }
    });
  }
});

describe('no secret in any log', () => {
  test('no token or JWT text in any server stderr or audit log of this file', { timeout: 20000 }, () => {
    const searched = assertNoSecretsLeaked();
    assert.ok(searched.sources > 0 && searched.bytes > 0, JSON.stringify(searched));
  });
});
