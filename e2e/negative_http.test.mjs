// Negative and edge-case tests of the Streamable HTTP transport (docs/mcp.md §2.3-2.7, §3.2, §6.4),
// with raw requests against `conformance_server --http 0`.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startHttpServer, httpRequest, HttpSession, ACCEPT_BOTH } from './lib/http.mjs';
import { assertError, assertResult, firstText, validationText, nestedPing, INIT_PARAMS } from './lib/jsonrpc.mjs';
import { rawId, rawValueAt } from './lib/rawjson.mjs';
import { LATEST_PROTOCOL_VERSION, sleep } from './lib/env.mjs';

const INIT_BODY = (v = '2025-11-25') => ({ jsonrpc: '2.0', id: 0, method: 'initialize', params: INIT_PARAMS(v) });
const JSON_HEADERS = { 'Content-Type': 'application/json', Accept: ACCEPT_BOTH };
const call = (name, args, meta) => {
  const p = { name, arguments: args };
  if (meta) p._meta = meta;
  return p;
};

// The HTTP-level error body: a JSON-RPC error with id null and the given code.
function assertHttpErrorBody(r, code) {
  assert.equal(r.contentType, 'application/json', `content-type ${r.headers['content-type']} body ${r.text.slice(0, 200)}`);
  assert.equal(r.raws.length, 1, `body: ${r.text.slice(0, 200)}`);
  assert.equal(rawId(r.raws[0]), 'null', `body: ${r.text.slice(0, 200)}`);
  assertError(r.messages[0], code);
}

function assertNoWildcardCors(r) {
  assert.notEqual(r.headers['access-control-allow-origin'], '*', 'Access-Control-Allow-Origin: *');
}

describe('http: transport rules', () => {
  let srv;
  let sess;
  before(async () => {
    srv = await startHttpServer();
    sess = new HttpSession(srv.url);
    await sess.initialize();
  });
  after(async () => {
    if (srv) {
      const ex = await srv.stop();
      assert.equal(srv.stdout, '', 'HTTP server wrote to stdout');
      assert.ok(!srv.exit || srv.exit.signal !== 'SIGKILL', `server needed SIGKILL: ${JSON.stringify(ex)}`);
    }
  });

  test('initialize: 200 application/json, a 128-bit lowercase hex session id, negotiated version', { timeout: 20000 }, async () => {
    const r = sess.initResponse;
    assert.equal(r.status, 200);
    assert.equal(r.contentType, 'application/json');
    assert.match(sess.sessionId ?? '', /^[0-9a-f]{32}$/);
    assert.equal(sess.protocolVersion, LATEST_PROTOCOL_VERSION);
    assertNoWildcardCors(r);
    for (const [asked, answered] of [['2025-06-18', '2025-06-18'], ['2025-03-26', '2025-03-26'], ['1999-01-01', LATEST_PROTOCOL_VERSION]]) {
      const s2 = new HttpSession(srv.url);
      const res = await s2.initialize({ protocolVersion: asked });
      assert.equal(res.protocolVersion, answered);
      assert.notEqual(s2.sessionId, sess.sessionId);
    }
  });

  test('a plain request is answered with 200 application/json', { timeout: 20000 }, async () => {
    const r = await sess.request('ping');
    assert.equal(r.status, 200);
    assert.equal(r.contentType, 'application/json');
    assert.deepEqual(assertResult(r.msg), {});
    assert.deepEqual(r.problems, []);
    const e = await sess.request('tools/call', call('echo', { text: 'hi' }));
    assert.equal(e.status, 200);
    assert.equal(e.contentType, 'application/json');
    assert.deepEqual(assertResult(e.msg).structuredContent, { text: 'hi' });
    assert.equal(firstText(e.msg.result), '{"text":"hi"}');
  });

  test('notifications and client responses get 202 with no body', { timeout: 20000 }, async () => {
    for (const body of [
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', method: 'notifications/does_not_exist', params: { a: 1 } },
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 31337 } },
      { jsonrpc: '2.0', id: 424242, result: {} },
      { jsonrpc: '2.0', id: 424243, error: { code: -1, message: 'x' } },
    ]) {
      const r = await sess.post(body);
      assert.equal(r.status, 202, `${JSON.stringify(body)}: ${r.status} ${r.text}`);
      assert.equal(r.body.length, 0, `202 with a body: ${r.text}`);
    }
  });

  test('foreign Host, foreign Origin and Origin null get 403', { timeout: 20000 }, async () => {
    const cases = [
      { Host: 'evil.example.com' },
      { Host: `evil.example.com:${srv.port}` },
      { Host: 'evil.example.com', Origin: 'http://evil.example.com' },
      { Origin: 'http://evil.example.com' },
      { Origin: `http://evil.example.com:${srv.port}` },
      { Origin: 'null' },
      { Origin: `http://127.0.0.1:${srv.port + 1}` },
      { Origin: `https://127.0.0.1:${srv.port}` },
    ];
    for (const extra of cases) {
      const r = await httpRequest(srv.url, { headers: { ...JSON_HEADERS, ...extra }, body: INIT_BODY() });
      assert.equal(r.status, 403, `${JSON.stringify(extra)} -> ${r.status} ${r.text.slice(0, 200)}`);
      assertNoWildcardCors(r);
      assert.equal(r.headers['mcp-session-id'], undefined);
      // Also for requests inside an existing session.
      const r2 = await sess.post({ jsonrpc: '2.0', id: 1, method: 'ping' }, { headers: extra });
      assert.equal(r2.status, 403, `in session ${JSON.stringify(extra)} -> ${r2.status}`);
    }
  });

  test('local Host and Origin values are accepted', { timeout: 20000 }, async () => {
    for (const extra of [
      { Host: `127.0.0.1:${srv.port}` },
      { Host: '127.0.0.1' },
      { Host: `localhost:${srv.port}` },
      { Host: 'localhost' },
      { Origin: `http://127.0.0.1:${srv.port}` },
      { Origin: `http://localhost:${srv.port}` },
      { Host: `localhost:${srv.port}`, Origin: `http://localhost:${srv.port}` },
    ]) {
      const r = await httpRequest(srv.url, { headers: { ...JSON_HEADERS, ...extra }, body: INIT_BODY() });
      assert.equal(r.status, 200, `${JSON.stringify(extra)} -> ${r.status} ${r.text.slice(0, 200)}`);
      assertNoWildcardCors(r);
    }
  });

  test('an Accept header without both types gets 406', { timeout: 20000 }, async () => {
    for (const accept of ['application/json', 'text/event-stream', 'text/html', undefined]) {
      const headers = { 'Content-Type': 'application/json' };
      if (accept) headers.Accept = accept;
      const r = await httpRequest(srv.url, { headers, body: INIT_BODY() });
      assert.equal(r.status, 406, `Accept ${accept} -> ${r.status}`);
      const r2 = await sess.post({ jsonrpc: '2.0', id: 1, method: 'ping' }, { headers: { Accept: accept ?? '' } });
      assert.equal(r2.status, 406, `in session, Accept ${accept} -> ${r2.status}`);
    }
  });

  test('a Content-Type other than application/json gets 415', { timeout: 20000 }, async () => {
    for (const ct of ['text/plain', 'application/x-www-form-urlencoded', 'text/event-stream']) {
      const r = await httpRequest(srv.url, { headers: { Accept: ACCEPT_BOTH, 'Content-Type': ct }, body: INIT_BODY() });
      assert.equal(r.status, 415, `Content-Type ${ct} -> ${r.status}`);
    }
    const r = await httpRequest(srv.url, { headers: { Accept: ACCEPT_BOTH }, body: INIT_BODY() });
    assert.equal(r.status, 415, `no Content-Type -> ${r.status}`);
    const ok = await httpRequest(srv.url, { headers: { Accept: ACCEPT_BOTH, 'Content-Type': 'application/json; charset=utf-8' }, body: INIT_BODY() });
    assert.equal(ok.status, 200, `application/json; charset=utf-8 -> ${ok.status}`);
  });

  test('a request without a session id gets 400; initialize with one gets 400', { timeout: 20000 }, async () => {
    const r = await httpRequest(srv.url, { headers: JSON_HEADERS, body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } });
    assert.equal(r.status, 400);
    assertHttpErrorBody(r, -32000);
    const r2 = await httpRequest(srv.url, { headers: { ...JSON_HEADERS, 'Mcp-Session-Id': sess.sessionId }, body: INIT_BODY() });
    assert.equal(r2.status, 400, `initialize with a session id -> ${r2.status}`);
    const g = await httpRequest(srv.url, { method: 'GET', headers: { Accept: 'text/event-stream' } });
    assert.equal(g.status, 400, `GET without session -> ${g.status}`);
    const d = await httpRequest(srv.url, { method: 'DELETE', headers: {} });
    assert.equal(d.status, 400, `DELETE without session -> ${d.status}`);
  });

  test('an unknown session id gets 404', { timeout: 20000 }, async () => {
    for (const id of ['0123456789abcdef0123456789abcdef', 'nonsense', sess.sessionId.toUpperCase()]) {
      const r = await httpRequest(srv.url, { headers: { ...JSON_HEADERS, 'Mcp-Session-Id': id }, body: { jsonrpc: '2.0', id: 1, method: 'ping' } });
      assert.equal(r.status, 404, `session ${id} -> ${r.status}`);
      assertHttpErrorBody(r, -32000);
    }
  });

  test('DELETE terminates a session; reusing it gets 404', { timeout: 20000 }, async () => {
    const s = new HttpSession(srv.url);
    await s.initialize();
    assert.equal((await s.request('ping')).status, 200);
    const d = await s.delete();
    assert.equal(d.status, 200, `DELETE -> ${d.status}`);
    const r = await s.request('ping');
    assert.equal(r.status, 404, `after DELETE -> ${r.status}`);
    assertHttpErrorBody(r, -32000);
    const n = await s.notify('notifications/initialized');
    assert.equal(n.status, 404, `notification after DELETE -> ${n.status}`);
    const d2 = await s.delete();
    assert.equal(d2.status, 404, `second DELETE -> ${d2.status}`);
    const g = await httpRequest(srv.url, { method: 'GET', headers: s.headers({ Accept: 'text/event-stream' }) });
    assert.equal(g.status, 404, `GET after DELETE -> ${g.status}`);
  });

  test('DELETE cancels in-flight work and ends its stream without a response', { timeout: 20000 }, async () => {
    const s = new HttpSession(srv.url);
    await s.initialize();
    const t0 = Date.now();
    const slow = s.request('tools/call', call('slow', { ms: 10000 }), { id: 'del-slow', timeout: 6000 });
    slow.catch(() => {});
    await sleep(300);
    const d = await s.delete();
    assert.equal(d.status, 200);
    let r;
    try {
      r = await slow;
    } catch (e) {
      assert.fail(`the POST of a request in a deleted session did not end: ${e.message}`);
    }
    assert.ok(Date.now() - t0 < 5000, `slow POST ended after ${Date.now() - t0} ms`);
    assert.equal(r.msg, undefined, `response after DELETE: ${r.text.slice(0, 200)}`);
  });

  test('an unsupported MCP-Protocol-Version gets 400', { timeout: 20000 }, async () => {
    for (const v of ['1999-01-01', 'garbage', '2024-11-05', '2026-07-28']) {
      const r = await sess.request('ping', undefined, { headers: { 'MCP-Protocol-Version': v } });
      assert.equal(r.status, 400, `MCP-Protocol-Version '${v}' -> ${r.status}`);
    }
    const ok = await sess.request('ping', undefined, { headers: { 'MCP-Protocol-Version': LATEST_PROTOCOL_VERSION } });
    assert.equal(ok.status, 200);
    // Absent header: the session's revision applies.
    const s = new HttpSession(srv.url);
    await s.initialize();
    s.protocolVersion = undefined;
    const none = await s.request('ping');
    assert.equal(none.status, 200);
    assert.deepEqual(assertResult(none.msg), {});
  });

  // The conformance scenario server-sse-multiple-streams (and server-sse-polling) sends
  // `mcp-protocol-version: 2025-03-26` on a session that negotiated 2025-11-25 and needs 2xx, so a
  // supported revision other than the negotiated one must not be refused (docs/mcp.md §6.1 forbids
  // baselining that scenario; this takes precedence over docs/mcp.md §2.3's "differs from the
  // session" rule).
  test('a supported MCP-Protocol-Version other than the negotiated one is accepted', { timeout: 20000 }, async () => {
    for (const v of ['2025-03-26', '2025-06-18']) {
      const r = await sess.request('tools/list', {}, { headers: { 'MCP-Protocol-Version': v } });
      assert.equal(r.status, 200, `MCP-Protocol-Version ${v} on a ${sess.protocolVersion} session -> ${r.status} ${r.text.slice(0, 200)}`);
      assert.ok(assertResult(r.msg).tools.length > 0);
    }
  });

  test('GET opens one SSE stream per session; a second concurrent GET gets 409', { timeout: 20000 }, async () => {
    const s = new HttpSession(srv.url);
    await s.initialize();
    const g1 = await httpRequest(srv.url, { method: 'GET', headers: s.headers({ Accept: 'text/event-stream' }), stream: true });
    try {
      assert.equal(g1.status, 200);
      assert.match(g1.headers['content-type'] ?? '', /^text\/event-stream/);
      const g2 = await httpRequest(srv.url, { method: 'GET', headers: s.headers({ Accept: 'text/event-stream' }) , timeout: 5000 });
      assert.equal(g2.status, 409, `second GET -> ${g2.status}`);
    } finally {
      g1.req.destroy();
    }
  });

  test('other paths get 404', { timeout: 20000 }, async () => {
    for (const p of ['/', '/mcp/extra', '/other', '/MCP']) {
      const r = await httpRequest(`${srv.origin}${p}`, { headers: JSON_HEADERS, body: INIT_BODY() });
      assert.equal(r.status, 404, `${p} -> ${r.status}`);
    }
  });

  test('non-JSON, invalid UTF-8 and 65-deep nesting get 400 with -32700 id null', { timeout: 20000 }, async () => {
    const bodies = [
      'hello',
      '{"jsonrpc":"2.0","id":1,',
      Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}}')]),
      Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}}')]),
      nestedPing(65, 1),
    ];
    for (const body of bodies) {
      const r = await sess.post(body);
      assert.equal(r.status, 400, `${String(body).slice(0, 60)} -> ${r.status} ${r.text.slice(0, 200)}`);
      assertHttpErrorBody(r, -32700);
    }
    const ok = await sess.post(nestedPing(64, 2));
    assert.equal(ok.status, 200);
    assert.deepEqual(assertResult(ok.responseFor('2')), {});
  });

  // Invalid-request errors are JSON-RPC errors; the spec fixes their code and id, not the status,
  // so 200 and 400 are both accepted.
  const expectInvalidRequest = async (body, idText) => {
    const r = await sess.post(body);
    assert.ok(r.status === 200 || r.status === 400, `${String(body).slice(0, 80)} -> HTTP ${r.status}`);
    assert.equal(r.raws.length, 1, `${String(body).slice(0, 80)} -> ${r.text.slice(0, 200)}`);
    assert.equal(rawId(r.raws[0]), idText, `${String(body).slice(0, 80)} -> ${r.raws[0]}`);
    assertError(r.messages[0], -32600);
  };

  test('a batch array gets one -32600 with id null', { timeout: 20000 }, async () => {
    await expectInvalidRequest('[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]', 'null');
    await expectInvalidRequest('[]', 'null');
  });

  test('non-objects and invalid messages get -32600', { timeout: 20000 }, async () => {
    for (const body of ['42', '"x"', 'null', 'true']) await expectInvalidRequest(body, 'null');
    await expectInvalidRequest('{"id":3,"method":"ping"}', '3');
    await expectInvalidRequest('{"jsonrpc":"1.0","id":4,"method":"ping"}', '4');
    await expectInvalidRequest('{"jsonrpc":"2.0","id":"5","method":5}', '"5"');
    await expectInvalidRequest('{"jsonrpc":"2.0","id":6,"method":"ping","params":[1]}', '6');
  });

  test('ids null, true, 1.5 and {} get -32600 with id null', { timeout: 20000 }, async () => {
    for (const id of ['null', 'true', '1.5', '{}', '[]']) {
      await expectInvalidRequest(`{"jsonrpc":"2.0","id":${id},"method":"ping"}`, 'null');
    }
  });

  test('ids keep their JSON type and exact value', { timeout: 20000 }, async () => {
    for (const id of ['5', '"5"', '-1', '9007199254740993', '""', '0']) {
      for (const body of [`{"jsonrpc":"2.0","id":${id},"method":"ping"}`,
        `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":{"text":"i"}}}`]) {
        const r = await sess.post(body);
        assert.equal(r.status, 200);
        assert.equal(r.raws.length, 1, r.text);
        assert.equal(rawId(r.raws[0]), id, `sent id ${id}, got ${r.raws[0].slice(0, 200)}`);
        assertResult(r.messages[0]);
      }
    }
  });

  test('unknown method -32601, unknown tool -32602, array arguments -32602, unknown resource -32002', { timeout: 20000 }, async () => {
    let r = await sess.request('no/such/method', {});
    assert.equal(r.status, 200);
    assertError(r.msg, -32601);
    r = await sess.request('tools/call', call('no_such_tool', {}));
    assert.equal(r.status, 200);
    assertError(r.msg, -32602, 'Unknown tool: no_such_tool');
    r = await sess.request('tools/call', { name: 'echo', arguments: ['x'] });
    assertError(r.msg, -32602);
    r = await sess.request('prompts/get', { name: 'no_such_prompt' });
    assertError(r.msg, -32602);
    r = await sess.request('tools/list', { cursor: 'not-a-cursor' });
    assertError(r.msg, -32602);
    r = await sess.request('resources/read', { uri: 'test://nope' });
    assertError(r.msg, -32002);
    assert.equal(r.msg.error.data?.uri, 'test://nope');
  });

  test('schema failures are isError results with the exact path lines', { timeout: 20000 }, async () => {
    const r = await sess.request('tools/call', call('schema_probe', { limit: 'x', extra: true, 'max files': -3 }));
    assert.equal(r.status, 200);
    const res = assertResult(r.msg);
    assert.equal(res.isError, true);
    assert.equal(res.structuredContent, undefined);
    assert.equal(firstText(res), validationText('schema_probe', [
      'arguments.depth: required property missing',
      'arguments.extra: unexpected property (additionalProperties is false)',
      'arguments.limit: expected integer or null, got string',
      "arguments['max files']: must be at least 0; got -3",
    ].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))));
    const enumFail = await sess.request('tools/call', call('schema_probe', { depth: 'L9' }));
    assert.equal(firstText(assertResult(enumFail.msg)),
      validationText('schema_probe', ['arguments.depth: must be one of "L0", "L1", "L2", "L3"; got "L9"']));
  });

  test('a throwing tool gives a sanitized INTERNAL_ERROR isError result', { timeout: 20000 }, async () => {
    const r = await sess.request('tools/call', call('throw', {}));
    const res = assertResult(r.msg);
    assert.equal(res.isError, true);
    assert.ok(firstText(res).startsWith('INTERNAL_ERROR: internal error (ref '), firstText(res));
    assert.ok(!r.text.includes('/secret/path'), 'exception text leaked');
  });

  test('a 2025-03-26 session gets no structuredContent and no outputSchema', { timeout: 20000 }, async () => {
    const s = new HttpSession(srv.url);
    await s.initialize({ protocolVersion: '2025-03-26' });
    const tl = assertResult((await s.request('tools/list')).msg);
    for (const t of tl.tools) assert.equal(t.outputSchema, undefined, t.name);
    const r = assertResult((await s.request('tools/call', call('echo', { text: 'v' }))).msg);
    assert.equal(r.structuredContent, undefined);
    assert.deepEqual(JSON.parse(firstText(r)), { text: 'v' });
  });

  test('progress travels on the POST SSE stream, increasing, before the response', { timeout: 20000 }, async () => {
    for (const token of ['"tok"', '9007199254740993']) {
      const r = await sess.post(`{"jsonrpc":"2.0","id":"p","method":"tools/call","params":{"name":"slow","arguments":{"ms":300},"_meta":{"progressToken":${token}}}}`);
      assert.equal(r.status, 200);
      assert.equal(r.contentType, 'text/event-stream', `progress answer was ${r.contentType}`);
      assert.deepEqual(r.problems, []);
      const respIdx = r.raws.findIndex((t) => rawId(t) === '"p"');
      assert.ok(respIdx >= 0, 'no response on the stream');
      assert.equal(respIdx, r.raws.length - 1, 'messages after the response on the stream');
      assert.deepEqual(assertResult(r.messages[respIdx]).structuredContent, { slept_ms: 300 });
      const progress = r.messages.slice(0, respIdx).filter((m) => m.method === 'notifications/progress');
      assert.ok(progress.length >= 3, `${progress.length} progress notifications`);
      assert.equal(progress.length, respIdx, 'unexpected non-progress messages');
      for (let i = 0; i < respIdx; i++) assert.equal(rawValueAt(r.raws[i], ['params', 'progressToken']), token);
      for (let i = 1; i < progress.length; i++) assert.ok(progress[i].params.progress > progress[i - 1].params.progress);
      const dataEvents = r.events.filter((e) => e.data);
      for (const e of dataEvents) assert.ok(e.id !== undefined && e.id !== '', `SSE event without id: ${e.data.slice(0, 100)}`);
      assert.equal(new Set(dataEvents.map((e) => e.id)).size, dataEvents.length, 'duplicate SSE event ids');
    }
  });

  test('a duplicate in-flight id gets -32600 while the original is answered once', { timeout: 20000 }, async () => {
    const s = new HttpSession(srv.url);
    await s.initialize();
    const slow = s.request('tools/call', call('slow', { ms: 800 }), { id: 42, timeout: 6000 });
    slow.catch(() => {});
    try {
      await sleep(150);
      const dup = await s.request('tools/call', call('echo', { text: 'dup' }), { id: 42, timeout: 6000 });
      assert.equal(dup.status, 200);
      assertError(dup.msg, -32600);
    } finally {
      const r = await slow;
      assert.equal(r.status, 200);
      assert.equal(r.raws.filter((t) => rawId(t) === '42').length, 1, r.text.slice(0, 300));
      assert.deepEqual(assertResult(r.msg).structuredContent, { slept_ms: 800 });
    }
  });

  test('a cancelled request gets no response and its POST ends', { timeout: 20000 }, async () => {
    const s = new HttpSession(srv.url);
    await s.initialize();
    const t0 = Date.now();
    const slow = s.request('tools/call', call('slow', { ms: 8000 }), { id: 77, timeout: 6000 });
    slow.catch(() => {});
    await sleep(300);
    const c = await s.notify('notifications/cancelled', { requestId: 77, reason: 'e2e' });
    assert.equal(c.status, 202);
    let r;
    try {
      r = await slow;
    } catch (e) {
      assert.fail(`the cancelled request's POST did not end: ${e.message}`);
    }
    assert.ok(Date.now() - t0 < 4000, `cancelled POST took ${Date.now() - t0} ms to end`);
    assert.equal(r.msg, undefined, `cancelled request answered: ${r.text.slice(0, 300)}`);
    assert.ok([200, 202, 204].includes(r.status), `status ${r.status}`);
    assert.deepEqual(assertResult((await s.request('ping')).msg), {});
  });

  test('1000 concurrent calls on one session are each answered exactly once', { timeout: 60000 }, async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
    try {
      const s = new HttpSession(srv.url, { agent });
      await s.initialize();
      const results = await Promise.all(Array.from({ length: 1000 }, (_, i) =>
        s.request('tools/call', call('echo', { text: `c${i}` }), { id: i + 1, timeout: 50000 })));
      results.forEach((r, i) => {
        assert.equal(r.status, 200, `call ${i + 1}: HTTP ${r.status}`);
        assert.equal(r.raws.length, 1, `call ${i + 1}: ${r.text.slice(0, 200)}`);
        assert.deepEqual(assertResult(r.msg).structuredContent, { text: `c${i}` });
      });
    } finally {
      agent.destroy();
    }
  });

  test('100 sequential sessions without DELETE all succeed', { timeout: 60000 }, async () => {
    const ids = new Set();
    const first = new HttpSession(srv.url);
    await first.initialize();
    for (let i = 0; i < 100; i++) {
      const s = new HttpSession(srv.url);
      await s.initialize();
      assert.match(s.sessionId ?? '', /^[0-9a-f]{32}$/);
      ids.add(s.sessionId);
      const r = await s.request('tools/list');
      assert.equal(r.status, 200, `session ${i}: HTTP ${r.status}`);
      assert.ok(assertResult(r.msg).tools.length > 0);
    }
    assert.equal(ids.size, 100, 'session ids repeat');
    const again = await first.request('ping');
    assert.equal(again.status, 200, `the first session was dropped: HTTP ${again.status}`);
  });
});

describe('http: limits', () => {
  test('an over-size body gets 413 and the server stays up', { timeout: 30000 }, async () => {
    const srv = await startHttpServer(['--max-message-bytes', '65536']);
    try {
      const s = new HttpSession(srv.url);
      await s.initialize();
      const big = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"${'x'.repeat(70000)}"}}}`;
      const r = await s.post(big);
      assert.equal(r.status, 413, `HTTP ${r.status}`);
      const ok = await s.request('tools/call', call('echo', { text: 'y'.repeat(60000) }));
      assert.equal(ok.status, 200);
      assert.equal(assertResult(ok.msg).structuredContent.text.length, 60000);
    } finally {
      await srv.stop();
    }
  });

  test('default limit: a 5 MiB body gets 413', { timeout: 30000 }, async () => {
    const srv = await startHttpServer();
    try {
      const s = new HttpSession(srv.url);
      await s.initialize();
      const r = await s.post(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"${'x'.repeat(5 * 1024 * 1024)}"}}}`);
      assert.equal(r.status, 413, `HTTP ${r.status}`);
      assert.deepEqual(assertResult((await s.request('ping')).msg), {});
    } finally {
      await srv.stop();
    }
  });

  test('SIGTERM with a call in flight exits 0 within 2 s', { timeout: 20000 }, async () => {
    const srv = await startHttpServer();
    const s = new HttpSession(srv.url);
    await s.initialize();
    const slow = s.request('tools/call', call('slow', { ms: 20000 }), { timeout: 10000 }).catch((e) => e);
    await sleep(200);
    const t0 = Date.now();
    srv.proc.kill('SIGTERM');
    const ex = await new Promise((resolve) => {
      if (srv.exit) resolve(srv.exit);
      else srv.proc.once('exit', (code, signal) => resolve({ code, signal }));
    });
    const ms = Date.now() - t0;
    assert.equal(ex.code, 0, `exit ${JSON.stringify(ex)}`);
    assert.ok(ms <= 2000, `exit took ${ms} ms`);
    await slow;
  });
});

describe('http: static bearer auth', () => {
  const tokA = `trove-e2e-A-${randomBytes(12).toString('hex')}`;
  const tokB = `trove-e2e-B-${randomBytes(12).toString('hex')}`;
  const wrong = `trove-e2e-wrong-${randomBytes(12).toString('hex')}`;
  let srv;
  before(async () => {
    srv = await startHttpServer(['--auth-token', tokA, '--auth-token', tokB, '--log-level', 'debug']);
  });
  after(async () => {
    if (srv) await srv.stop();
  });

  test('missing or wrong token gets 401 with WWW-Authenticate: Bearer', { timeout: 20000 }, async () => {
    for (const auth of [undefined, `Bearer ${wrong}`, `Bearer ${tokA}x`, `bearer`, `Basic ${Buffer.from(`u:${tokA}`).toString('base64')}`, tokA]) {
      const headers = { ...JSON_HEADERS };
      if (auth !== undefined) headers.Authorization = auth;
      const r = await httpRequest(srv.url, { headers, body: INIT_BODY() });
      // A Bearer scheme without a token is malformed: 400 invalid_request (RFC 6750 §3.1).
      const want = auth === 'bearer' ? 400 : 401;
      assert.equal(r.status, want, `Authorization ${auth?.slice(0, 20)} -> ${r.status}`);
      assert.match(r.headers['www-authenticate'] ?? '', /^Bearer\b/, `WWW-Authenticate: ${r.headers['www-authenticate']}`);
      assert.equal(r.headers['mcp-session-id'], undefined);
      assert.ok(!r.text.includes(tokA) && !r.text.includes(wrong), 'token echoed in the body');
    }
  });

  test('each configured token works', { timeout: 20000 }, async () => {
    for (const tok of [tokA, tokB]) {
      const s = new HttpSession(srv.url, { headers: { Authorization: `Bearer ${tok}` } });
      await s.initialize();
      const r = await s.request('tools/call', call('echo', { text: 'authed' }));
      assert.equal(r.status, 200);
      assert.deepEqual(assertResult(r.msg).structuredContent, { text: 'authed' });
    }
  });

  test('every request of a session is authenticated', { timeout: 20000 }, async () => {
    const s = new HttpSession(srv.url, { headers: { Authorization: `Bearer ${tokA}` } });
    await s.initialize();
    const noAuth = await httpRequest(srv.url, {
      headers: { ...JSON_HEADERS, 'Mcp-Session-Id': s.sessionId }, body: { jsonrpc: '2.0', id: 1, method: 'ping' },
    });
    assert.equal(noAuth.status, 401, `session request without token -> ${noAuth.status}`);
    assert.match(noAuth.headers['www-authenticate'] ?? '', /^Bearer\b/);
    const wrongAuth = await s.request('ping', undefined, { headers: { Authorization: `Bearer ${wrong}` } });
    assert.equal(wrongAuth.status, 401);
  });

  test("a session belongs to its token: another valid token gets 404 for it (docs/mcp.md §2.4)", { timeout: 20000 }, async () => {
    const a = new HttpSession(srv.url, { headers: { Authorization: `Bearer ${tokA}` } });
    await a.initialize();
    // The same session id, presented with token B.
    const b = new HttpSession(srv.url, { headers: { Authorization: `Bearer ${tokB}` } });
    b.sessionId = a.sessionId;
    b.protocolVersion = a.protocolVersion;
    const steal = [
      ['tools/call', await b.request('tools/call', call('echo', { text: 'stolen' }))],
      ['ping', await b.request('ping')],
      ['notification', await b.notify('notifications/initialized')],
      ['GET', await httpRequest(srv.url, { method: 'GET', headers: { ...b.headers(), Accept: 'text/event-stream' }, timeout: 5000 })],
      ['DELETE', await b.delete()],
    ];
    for (const [what, r] of steal) {
      assert.equal(r.status, 404, `${what} with another token -> ${r.status} ${r.text?.slice(0, 200)}`);
      assert.ok(!r.text.includes('stolen'), `${what}: the tool ran`);
      assertHttpErrorBody(r, -32000);
    }
    // Exactly what an unknown session gets.
    const unknown = new HttpSession(srv.url, { headers: { Authorization: `Bearer ${tokB}` } });
    unknown.sessionId = randomBytes(16).toString('hex');
    unknown.protocolVersion = a.protocolVersion;
    const u = await unknown.request('ping');
    assert.equal(u.status, 404);
    assert.deepEqual(steal[1][1].messages, u.messages);
    // The owner's session is untouched, and the owner can end it.
    const mine = await a.request('tools/call', call('echo', { text: 'mine' }));
    assert.equal(mine.status, 200);
    assert.deepEqual(assertResult(mine.msg).structuredContent, { text: 'mine' });
    assert.equal((await a.delete()).status, 200);
    assert.equal((await a.request('ping')).status, 404);
  });

  test('a token in the query string gets 400', { timeout: 20000 }, async () => {
    for (const q of [`access_token=${tokA}`, `access_token=${wrong}`]) {
      const r = await httpRequest(`${srv.url}?${q}`, { headers: JSON_HEADERS, body: INIT_BODY() });
      assert.equal(r.status, 400, `?${q.slice(0, 20)} without header -> ${r.status}`);
      const r2 = await httpRequest(`${srv.url}?${q}`, { headers: { ...JSON_HEADERS, Authorization: `Bearer ${tokA}` }, body: INIT_BODY() });
      assert.equal(r2.status, 400, `?${q.slice(0, 20)} with header -> ${r2.status}`);
    }
  });

  test('no token string ever reaches stderr', { timeout: 20000 }, async () => {
    // Runs after the other auth tests; stop the server so stderr is complete.
    await sleep(100);
    await srv.stop();
    for (const t of [tokA, tokB, wrong]) {
      assert.ok(!srv.stderr.includes(t), `token ${t.slice(0, 14)}... found in stderr`);
    }
    assert.ok(srv.stderr.length > 0, 'debug logging wrote nothing to stderr');
  });
});

describe('http: policy flags (token file with two principals, audit log)', () => {
  const alice = `alice-${randomBytes(12).toString('hex')}`;
  const reader = `reader-${randomBytes(12).toString('hex')}`;
  let srv;
  let dir;
  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'trove-policy-'));
    writeFileSync(path.join(dir, 'tokens.txt'),
      `# two principals\nalice read,write ${alice}\nreader read ${reader}\n`, { mode: 0o600 });
    srv = await startHttpServer(['--auth', 'static', '--token-file', path.join(dir, 'tokens.txt'),
      '--audit-log', path.join(dir, 'audit.jsonl'), '--log-level', 'debug']);
  });
  after(async () => {
    if (srv) await srv.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('no token: 401 with a Bearer challenge', { timeout: 20000 }, async () => {
    const r = await httpRequest(srv.url, { headers: { ...JSON_HEADERS }, body: INIT_BODY() });
    assert.equal(r.status, 401);
    assert.match(r.headers['www-authenticate'] ?? '', /^Bearer\b/);
  });

  test('a read-only principal neither sees nor calls the write tool; the writer does', { timeout: 20000 }, async () => {
    const r = new HttpSession(srv.url, { headers: { Authorization: `Bearer ${reader}` } });
    await r.initialize();
    const list = await r.request('tools/list');
    const names = assertResult(list.msg).tools.map((t) => t.name);
    assert.ok(names.includes('echo'), 'echo (read) is listed');
    assert.ok(!names.includes('slow'), 'slow (write) is hidden from a read-only principal');
    const denied = await r.request('tools/call', call('slow', { ms: 10 }));
    const res = assertResult(denied.msg);
    assert.equal(res.isError, true);
    assert.equal(res._meta['trove/error'].code, 'PERMISSION_DENIED');
    const ok = await r.request('tools/call', call('echo', { text: 'read' }));
    assert.deepEqual(assertResult(ok.msg).structuredContent, { text: 'read' });

    const w = new HttpSession(srv.url, { headers: { Authorization: `Bearer ${alice}` } });
    await w.initialize();
    const wl = assertResult((await w.request('tools/list')).msg).tools.map((t) => t.name);
    assert.ok(wl.includes('slow'));
    const ran = await w.request('tools/call', call('slow', { ms: 10 }));
    assert.notEqual(assertResult(ran.msg).isError, true);
  });

  test('every call is audited, with the principal and without the token', { timeout: 20000 }, async () => {
    const r = new HttpSession(srv.url, { headers: { Authorization: `Bearer ${reader}` } });
    await r.initialize();
    await r.request('tools/call', call('echo', { text: 'audited' }), { id: 'audit-me' });
    let record;
    for (let i = 0; i < 50 && !record; i++) {
      const text = readFileSync(path.join(dir, 'audit.jsonl'), 'utf8');
      assert.ok(!text.includes(reader) && !text.includes(alice), 'a token is in the audit log');
      record = text.split('\n').filter(Boolean).map((l) => JSON.parse(l)).find((e) => e.requestId === 'audit-me');
      if (!record) await sleep(50);
    }
    assert.ok(record, 'no audit record for the call');
    assert.equal(record.type, 'tool_call');
    assert.equal(record.principal, 'reader');
    assert.equal(record.operation, 'echo');
    assert.equal(record.status, 'success');
    assert.equal(record.sessionId, r.sessionId);
    assert.match(record.tokenId, /^[0-9a-f]{12}$/);
  });
});
