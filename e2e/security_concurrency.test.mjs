// Security under load (issue 18): 8 SDK clients with 8 different principals (static tokens)
// hammer one kodo-mcp over Streamable HTTP on loopback, each with several calls in flight, for
// TROVE_SECURITY_SECONDS seconds (default 5; 30 in bench mode). Every call checks a module
// with a name of its own, so a reply that went to the wrong session or request shows as a wrong
// module name. Afterwards the audit log holds exactly one tool_call record per call made: the
// records of each principal carry that principal, its session and, as the arguments' SHA-256,
// exactly the multiset of the sources it sent. No token appears in the stderr or the log.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  SECURITY_SECONDS, serverRow, rowSkipReason, newToken, writeTokenFile, startRowHttp, sdkHttpClient,
  readAuditRecords, runAudit, collectAuditLog, assertNoSecretsLeaked, sha256Hex, stopClean,
} from './lib/security.mjs';
import { HttpSession, httpRequest } from './lib/http.mjs';

const CLIENTS = 8;
const IN_FLIGHT = 4;
const row = serverRow('kodo');

describe(`concurrency: ${CLIENTS} principals on one kodo-mcp for ${SECURITY_SECONDS} s`, () => {
  const skip = rowSkipReason(row);
  let dir;
  let srv;
  let auditFile;
  const tokens = [];

  before(async () => {
    if (skip) return;
    dir = mkdtempSync(path.join(tmpdir(), 'trove-security-load-'));
    for (let i = 0; i < CLIENTS; i++) tokens.push(newToken(`load${i}`));
    const tokenFile = writeTokenFile(path.join(dir, 'tokens.txt'),
      tokens.map((token, i) => ({ principal: `load-${i}`, scopes: ['read'], token })));
    auditFile = path.join(dir, 'audit.jsonl');
    collectAuditLog(auditFile);
    srv = await startRowHttp(row, {}, ['--auth', 'static', '--token-file', tokenFile, '--audit-log', auditFile], 'load');
  });
  after(async () => {
    if (srv) await srv.stop();
    // The leak check below reads the audit log first.
  });

  test('every reply matches its own request, and the audit log has exactly one record per call', { timeout: (SECURITY_SECONDS + 60) * 1000 }, async (t) => {
    if (skip) { t.skip(skip); return; }
    const clients = await Promise.all(tokens.map((tok) => sdkHttpClient(srv.url, tok)));
    const sent = clients.map(() => []); // per client: the sha256 of each call's arguments
    const failures = [];
    const sessions = clients.map((c) => c.transport.sessionId);
    const deadline = Date.now() + SECURITY_SECONDS * 1000;
    try {
      const lane = async (ci, li) => {
        for (let n = 0; Date.now() < deadline && failures.length === 0; n++) {
          const mod = `c${ci}_l${li}_n${n}`;
          const params = row.readCall(mod);
          sent[ci].push(sha256Hex(JSON.stringify(params.arguments)));
          const r = await clients[ci].client.callTool(params);
          try {
            row.checkRead(r, mod);
          } catch (e) {
            failures.push(`client ${ci} lane ${li} call ${n}: ${e.message.slice(0, 300)}`);
          }
        }
      };
      const lanes = [];
      for (let ci = 0; ci < CLIENTS; ci++) for (let li = 0; li < IN_FLIGHT; li++) lanes.push(lane(ci, li));
      await Promise.all(lanes);
    } finally {
      for (const c of clients) await c.client.close().catch(() => {});
    }
    assert.deepEqual(failures, [], 'replies that do not match their request');
    const total = sent.reduce((n, s) => n + s.length, 0);
    t.diagnostic(`${total} calls in ${SECURITY_SECONDS} s (${(total / SECURITY_SECONDS).toFixed(0)}/s)`);
    for (let ci = 0; ci < CLIENTS; ci++) assert.ok(sent[ci].length >= IN_FLIGHT, `client ${ci} made ${sent[ci].length} calls`);

    await stopClean(srv); // the writer flushes at exit
    const records = readAuditRecords(auditFile).filter((r) => r.type === 'tool_call');
    assert.equal(records.length, total, `${records.length} tool_call records for ${total} calls`);
    for (let ci = 0; ci < CLIENTS; ci++) {
      const mine = records.filter((r) => r.principal === `load-${ci}`);
      assert.equal(mine.length, sent[ci].length, `load-${ci}: ${mine.length} records for ${sent[ci].length} calls`);
      for (const r of mine) {
        assert.equal(r.sessionId, sessions[ci], `load-${ci}: a record of another session`);
        assert.equal(r.status, 'success', JSON.stringify(r));
        assert.equal(r.operation, 'kodo.check');
        assert.equal(r.tokenId, sha256Hex(tokens[ci]).slice(0, 12));
      }
      assert.deepEqual(mine.map((r) => r.arguments.sha256).sort(), [...sent[ci]].sort(),
        `load-${ci}: the audited arguments are not the calls it made`);
      assert.equal(new Set(mine.map((r) => r.requestId)).size, mine.length, `load-${ci}: a request id audited twice`);
    }
    const v = runAudit(row, ['verify', auditFile]);
    assert.equal(v.code, 0, v.stdout + v.stderr);
  });

  test('no token text in the server stderr or the audit log', (t) => {
    if (skip) { t.skip(skip); return; }
    try {
      assertNoSecretsLeaked();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

// A client that opens a new connection per request (no keep-alive) sends its SSE GET and its
// next POST at the same moment. The server's connection threads must not leave the POST queued
// behind the stream until some later connection arrives (a stall seen with the SDK client and
// a connection-per-request fetch).
describe('availability: POSTs on fresh connections while SSE streams are open', () => {
  const skip = rowSkipReason(row);
  test('each POST is answered while its session holds a GET stream', { timeout: 60000 }, async (t) => {
    if (skip) { t.skip(skip); return; }
    const srv = await startRowHttp(row, {}, [], 'availability');
    const streams = [];
    try {
      for (let i = 0; i < 30; i++) {
        const s = new HttpSession(srv.url);
        await s.initialize();
        const get = httpRequest(srv.url, { method: 'GET', headers: s.headers({ Accept: 'text/event-stream' }), stream: true, timeout: 5000 });
        const post = s.request('tools/list', undefined, { timeout: 5000 }).catch((e) => e);
        streams.push(get.catch(() => undefined));
        const r = await post;
        assert.ok(!(r instanceof Error), `round ${i + 1}: the POST was not answered while the GET stream opened: ${r.message}`);
        assert.equal(r.status, 200);
        assert.ok(r.msg?.result?.tools?.length > 0);
      }
    } finally {
      for (const g of await Promise.all(streams)) g?.req.destroy();
      await srv.stop();
    }
  });
});
