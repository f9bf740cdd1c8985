// Negative and edge-case tests of the MCP core over stdio (docs/mcp.md §2.1-2.2, §3.1, §4.1-4.9,
// §3.2, §2.8, §6.4), driven with raw newline-delimited JSON-RPC against
// $TROVE_BUILD_DIR/e2e/conformance_server.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { StdioServer } from './lib/stdio.mjs';
import { assertError, assertResult, firstText, validationText, nestedPing, INIT_PARAMS } from './lib/jsonrpc.mjs';
import { rawValueAt } from './lib/rawjson.mjs';
import { ACCEPTED_PROTOCOL_VERSIONS, LATEST_PROTOCOL_VERSION, sleep } from './lib/env.mjs';

// Runs fn(server) against a fresh server (initialized unless init: false), then checks that
// stdout carried only JSON-RPC messages and that the server is still running.
async function withServer(fn, { args = [], init = true, initOpts, expectAlive = true } = {}) {
  const s = await StdioServer.start(args);
  try {
    if (init) await s.initialize(initOpts);
    await fn(s);
    assert.deepEqual(s.violations, [], 'stdout carried something other than JSON-RPC messages');
    if (expectAlive) {
      assert.equal(s.exit, null, `server exited: ${JSON.stringify(s.exit)}; stderr: ${s.stderr.slice(-500)}`);
    }
  } finally {
    await s.stop();
  }
}

// Sends one raw line and returns the single response it produces (the next line), asserting that
// nothing else follows within `quietMs`.
async function sendExpectOne(s, line, { quietMs = 150 } = {}) {
  const from = s.lines.length;
  s.send(line);
  const entry = await s.waitFor(() => true, { from, what: `reply to ${String(line).slice(0, 80)}` });
  const rest = await s.quiet(quietMs, { from: entry.index + 1 });
  assert.deepEqual(rest.map((e) => e.raw), [], `extra output after reply to ${String(line).slice(0, 80)}`);
  return entry;
}

async function assertAlive(s) {
  const r = await s.request('ping', undefined, { id: `alive-${s.nextId()}` });
  assert.deepEqual(assertResult(r), {});
}

const callParams = (name, args, meta) => {
  const p = { name };
  if (args !== undefined) p.arguments = args;
  if (meta !== undefined) p._meta = meta;
  return p;
};

describe('stdio: malformed input', () => {
  test('non-JSON lines get -32700 with id null and the server stays up', { timeout: 20000 }, async () => {
    await withServer(async (s) => {
      for (const line of ['hello', '{"jsonrpc":"2.0","id":1,', "{'jsonrpc':'2.0'}", '{"jsonrpc":"2.0","id":1,"method":"ping"}}',
        '{"a":1 "b":2}', 'nul']) {
        const e = await sendExpectOne(s, line);
        assertError(e.msg, -32700);
        assert.equal(e.id, 'null', `id for ${line}: ${e.raw}`);
        await assertAlive(s);
      }
    });
  });

  test('invalid UTF-8 gets -32700 with id null', { timeout: 20000 }, async () => {
    await withServer(async (s) => {
      const bad = [
        Buffer.from([0xff]),
        Buffer.from([0xc0, 0xaf]), // overlong '/'
        Buffer.from([0xe2, 0x82]), // truncated sequence
        Buffer.from([0xed, 0xa0, 0x80]), // UTF-8 encoded surrogate
      ];
      for (const b of bad) {
        const line = Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":7,"method":"ping","params":{"x":"a'), b,
          Buffer.from('b"}}\n')]);
        const e = await sendExpectOne(s, line);
        assertError(e.msg, -32700);
        assert.equal(e.id, 'null', `invalid UTF-8 ${b.toString('hex')}: ${e.raw}`);
        await assertAlive(s);
      }
    });
  });

  test('65-deep nesting gets -32700 with id null; 64 levels are accepted', { timeout: 20000 }, async () => {
    await withServer(async (s) => {
      const e = await sendExpectOne(s, nestedPing(65, 1));
      assertError(e.msg, -32700);
      assert.equal(e.id, 'null');
      await assertAlive(s);
      const ok = await sendExpectOne(s, nestedPing(64, 2));
      assert.equal(ok.id, '2');
      assert.deepEqual(assertResult(ok.msg), {});
      const deep = await sendExpectOne(s, nestedPing(5000, 3));
      assertError(deep.msg, -32700);
      assert.equal(deep.id, 'null');
      await assertAlive(s);
    });
  });

  test('JSON values that are not objects get -32600 with id null', { timeout: 20000 }, async () => {
    await withServer(async (s) => {
      for (const line of ['42', '"ping"', 'null', 'true', '[]']) {
        const e = await sendExpectOne(s, line);
        assertError(e.msg, -32600);
        assert.equal(e.id, 'null', `${line}: ${e.raw}`);
      }
      await assertAlive(s);
    });
  });

  test('a batch array gets one -32600 with id null and none of its requests runs', { timeout: 20000 }, async () => {
    await withServer(async (s) => {
      const e = await sendExpectOne(s, '[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]',
        { quietMs: 400 });
      assertError(e.msg, -32600);
      assert.equal(e.id, 'null');
      await assertAlive(s);
    });
  });

  test('invalid message objects get -32600 carrying their valid id', { timeout: 20000 }, async () => {
    await withServer(async (s) => {
      const cases = [
        ['{"id":3,"method":"ping"}', '3'], // missing jsonrpc
        ['{"jsonrpc":"1.0","id":4,"method":"ping"}', '4'],
        ['{"jsonrpc":2.0,"id":5,"method":"ping"}', '5'],
        ['{"jsonrpc":"2.0","id":6,"method":5}', '6'], // non-string method
        ['{"jsonrpc":"2.0","id":"seven","method":"ping","params":[1]}', '"seven"'], // non-object params
        ['{"jsonrpc":"2.0","id":8,"method":"tools/list","params":"x"}', '8'],
      ];
      for (const [line, id] of cases) {
        const e = await sendExpectOne(s, line);
        assertError(e.msg, -32600);
        assert.equal(e.id, id, `${line}: ${e.raw}`);
      }
      await assertAlive(s);
    });
  });

  test('ids null, true, 1.5, {} and [] get -32600 with id null', { timeout: 20000 }, async () => {
    await withServer(async (s) => {
      for (const id of ['null', 'true', 'false', '1.5', '{}', '[]', '{"a":1}']) {
        const e = await sendExpectOne(s, `{"jsonrpc":"2.0","id":${id},"method":"ping"}`);
        assertError(e.msg, -32600);
        assert.equal(e.id, 'null', `id ${id}: ${e.raw}`);
      }
      await assertAlive(s);
    });
  });

  test('ids keep their JSON type and exact value', { timeout: 20000 }, async () => {
    await withServer(async (s) => {
      const ids = ['5', '"5"', '-1', '0', '9007199254740993', '-9007199254740993', '""', '"a\\"b"',
        '"9007199254740993"', '12345678901234567890'];
      for (const id of ids) {
        for (const [method, params] of [['ping', undefined], ['tools/call', callParams('echo', { text: 'x' })]]) {
          const from = s.lines.length;
          const p = params === undefined ? '' : `,"params":${JSON.stringify(params)}`;
          s.send(`{"jsonrpc":"2.0","id":${id},"method":"${method}"${p}}`);
          const e = await s.waitFor(() => true, { from, what: `reply for id ${id}` });
          assert.equal(e.id, id, `${method} with id ${id} answered with ${e.raw.slice(0, 200)}`);
          assertResult(e.msg);
        }
      }
    });
  });

  test('CRLF line endings are accepted and blank lines are skipped', { timeout: 20000 }, async () => {
    await withServer(async (s) => {
      const from = s.lines.length;
      s.sendRaw('\n\n\r\n');
      assert.deepEqual((await s.quiet(300, { from })).map((e) => e.raw), []);
      s.sendRaw('{"jsonrpc":"2.0","id":"crlf","method":"ping"}\r\n');
      const e = await s.waitForResponse('"crlf"');
      assert.deepEqual(assertResult(e.msg), {});
    });
  });

  test('an over-size line gets -32600 with id null and the server stays up', { timeout: 30000 }, async () => {
    await withServer(async (s) => {
      const pad = 'x'.repeat(70000);
      const e = await sendExpectOne(s, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"${pad}"}}}`);
      assertError(e.msg, -32600);
      assert.equal(e.id, 'null');
      await assertAlive(s);
      // A message just under the limit is handled normally.
      const text = 'y'.repeat(60000);
      const r = await s.request('tools/call', callParams('echo', { text }));
      assert.equal(assertResult(r).structuredContent.text, text);
    }, { args: ['--max-message-bytes', '65536'] });
  });

  test('default limit: a 5 MiB line is rejected, a 3 MiB message is served', { timeout: 40000 }, async () => {
    await withServer(async (s) => {
      const big = 'z'.repeat(5 * 1024 * 1024);
      const e = await sendExpectOne(s, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"${big}"}}}`);
      assertError(e.msg, -32600);
      assert.equal(e.id, 'null');
      await assertAlive(s);
      const text = 'w'.repeat(3 * 1024 * 1024);
      const r = await s.request('tools/call', callParams('echo', { text }), { timeout: 20000 });
      assert.equal(assertResult(r).structuredContent.text.length, text.length);
    });
  });
});

describe('stdio: notifications and responses from the client', () => {
  test('notifications never get a reply', { timeout: 20000 }, async () => {
    await withServer(async (s) => {
      const from = s.lines.length;
      s.notify('notifications/initialized');
      s.notify('notifications/initialized', {});
      s.notify('notifications/does_not_exist', { x: 1 });
      s.notify('notifications/cancelled', { requestId: 123456, reason: 'nothing' });
      s.notify('notifications/cancelled', { requestId: 'never-sent' });
      s.notify('notifications/progress', { progressToken: 'unknown', progress: 1 });
      s.notify('notifications/roots/list_changed');
      s.notify('unknown/method/no/id');
      s.send('{"jsonrpc":"2.0","id":99999,"result":{}}'); // a response to a request never sent
      s.send('{"jsonrpc":"2.0","id":99998,"error":{"code":-1,"message":"x"}}');
      const out = await s.quiet(500, { from });
      assert.deepEqual(out.map((e) => e.raw), []);
      await assertAlive(s);
    });
  });

  test('notifications before initialize get no reply either', { timeout: 20000 }, async () => {
    await withServer(async (s) => {
      s.notify('notifications/initialized');
      s.notify('notifications/whatever');
      assert.deepEqual((await s.quiet(400, { from: 0 })).map((e) => e.raw), []);
    }, { init: false });
  });
});

describe('stdio: lifecycle and versions', () => {
  test('before initialize only ping is answered', { timeout: 20000 }, async () => {
    await withServer(async (s) => {
      const ping = await s.request('ping', undefined, { id: 1 });
      assert.deepEqual(assertResult(ping), {});
      for (const [method, params] of [['tools/list', undefined], ['tools/call', callParams('echo', { text: 'x' })],
        ['resources/list', {}], ['prompts/list', {}], ['logging/setLevel', { level: 'debug' }]]) {
        const r = await s.request(method, params);
        assertError(r, -32600);
      }
      const init = await s.request('initialize', INIT_PARAMS());
      assert.equal(assertResult(init).protocolVersion, LATEST_PROTOCOL_VERSION);
    }, { init: false });
  });

  test('a second initialize gets -32600', { timeout: 20000 }, async () => {
    await withServer(async (s) => {
      const r = await s.request('initialize', INIT_PARAMS());
      assertError(r, -32600);
      await assertAlive(s);
    });
  });

  test('requests between the initialize response and notifications/initialized are served', { timeout: 20000 }, async () => {
    await withServer(async (s) => {
      const init = await s.request('initialize', INIT_PARAMS());
      assertResult(init);
      const r = await s.request('tools/list');
      assert.ok(assertResult(r).tools.length > 0);
      s.notify('notifications/initialized');
      await assertAlive(s);
    }, { init: false });
  });

  test('initialize result: capabilities, serverInfo', { timeout: 20000 }, async () => {
    await withServer(async (s) => {
      const r = assertResult(await s.request('initialize', INIT_PARAMS()));
      assert.equal(r.protocolVersion, LATEST_PROTOCOL_VERSION);
      assert.equal(typeof r.serverInfo?.name, 'string');
      assert.equal(typeof r.serverInfo?.version, 'string');
      const c = r.capabilities;
      assert.deepEqual(c.tools, {});
      assert.equal(c.resources?.subscribe, true);
      assert.ok(c.prompts, 'prompts capability');
      assert.deepEqual(c.logging, {});
      assert.deepEqual(c.completions, {});
      assert.equal(c.tasks, undefined);
      assert.equal(c.experimental, undefined);
    }, { init: false });
  });

  for (const v of ACCEPTED_PROTOCOL_VERSIONS) {
    test(`initialize with ${v} is echoed`, { timeout: 20000 }, async () => {
      await withServer(async (s) => {
        const r = await s.request('initialize', INIT_PARAMS(v));
        assert.equal(assertResult(r).protocolVersion, v);
      }, { init: false });
    });
  }

  for (const v of ['1999-01-01', '2024-11-05', '2024-10-07', '2026-07-28', 'garbage']) {
    test(`initialize with ${v} is answered with ${LATEST_PROTOCOL_VERSION}`, { timeout: 20000 }, async () => {
      await withServer(async (s) => {
        const r = await s.request('initialize', INIT_PARAMS(v));
        assert.equal(assertResult(r).protocolVersion, LATEST_PROTOCOL_VERSION);
      }, { init: false });
    });
  }

  test('a 2025-03-26 session sees no outputSchema, title, icons or structuredContent', { timeout: 20000 }, async () => {
    await withServer(async (s) => {
      const tools = assertResult(await s.request('tools/list')).tools;
      assert.ok(tools.some((t) => t.name === 'echo'));
      for (const t of tools) {
        assert.equal(t.outputSchema, undefined, `${t.name} has outputSchema`);
        assert.equal(t.title, undefined, `${t.name} has title`);
        assert.equal(t.icons, undefined, `${t.name} has icons`);
      }
      const r = assertResult(await s.request('tools/call', callParams('echo', { text: 'old' })));
      assert.equal(r.structuredContent, undefined);
      assert.deepEqual(JSON.parse(firstText(r)), { text: 'old' });
    }, { initOpts: { protocolVersion: '2025-03-26' } });
  });

  test('a 2025-06-18 session gets outputSchema and structuredContent', { timeout: 20000 }, async () => {
    await withServer(async (s) => {
      const tools = assertResult(await s.request('tools/list')).tools;
      const echo = tools.find((t) => t.name === 'echo');
      assert.ok(echo?.outputSchema, 'echo outputSchema');
      for (const t of tools) assert.equal(t.icons, undefined, `${t.name} has icons in 2025-06-18`);
      const r = assertResult(await s.request('tools/call', callParams('echo', { text: 'mid' })));
      assert.deepEqual(r.structuredContent, { text: 'mid' });
    }, { initOpts: { protocolVersion: '2025-06-18' } });
  });
});

describe('stdio: method and params errors', () => {
  test('unknown methods get -32601', { timeout: 20000 }, async () => {
    await withServer(async (s) => {
      for (const m of ['no/such/method', 'tasks/list', 'tasks/get', 'roots/list', 'tools/unknown', 'Ping']) {
        const r = await s.request(m, {});
        assertError(r, -32601);
      }
    });
  });

  test('an unknown tool gets -32602 "Unknown tool: <name>", not isError', { timeout: 20000 }, async () => {
    await withServer(async (s) => {
      const r = await s.request('tools/call', callParams('no_such_tool', {}));
      assertError(r, -32602, 'Unknown tool: no_such_tool');
    });
  });

  test('malformed tools/call params get -32602', { timeout: 20000 }, async () => {
    await withServer(async (s) => {
      for (const params of [
        { name: 'echo', arguments: ['text', 'x'] },
        { name: 'echo', arguments: 'text' },
        { name: 'echo', arguments: 5 },
        { arguments: { text: 'x' } },
        { name: 42, arguments: {} },
      ]) {
        assertError(await s.request('tools/call', params), -32602);
      }
      // params absent altogether
      assertError(await s.request('tools/call'), -32602);
    });
  });

  test('invalid params on other methods get -32602', { timeout: 20000 }, async () => {
    await withServer(async (s) => {
      const cases = [
        ['logging/setLevel', { level: 'loud' }],
        ['logging/setLevel', {}],
        ['resources/read', {}],
        ['resources/read', { uri: 42 }],
        ['prompts/get', { name: 'no_such_prompt' }],
        ['prompts/get', { name: 'test_prompt_with_arguments', arguments: { arg1: 'only one' } }],
        ['prompts/get', {}],
        ['completion/complete', { ref: { type: 'ref/prompt', name: 'no_such_prompt' }, argument: { name: 'a', value: '' } }],
        ['completion/complete', { ref: { type: 'ref/resource', uri: 'test://no/{such}/template' }, argument: { name: 'such', value: '' } }],
      ];
      for (const [m, p] of cases) {
        const r = await s.request(m, p);
        assertError(r, -32602);
        assert.ok(r.error.message.length > 0);
      }
    });
  });

  test('invalid cursors get -32602', { timeout: 20000 }, async () => {
    await withServer(async (s) => {
      for (const m of ['tools/list', 'resources/list', 'resources/templates/list', 'prompts/list']) {
        const ok = assertResult(await s.request(m, {}));
        assert.equal(ok.nextCursor, undefined, `${m} returned nextCursor for a short list`);
        for (const cursor of ['not-a-cursor', '!!!', 'AAAA']) {
          const r = await s.request(m, { cursor });
          assertError(r, -32602);
        }
      }
    });
  });

  test('unknown resources get -32002 with data.uri', { timeout: 20000 }, async () => {
    await withServer(async (s) => {
      for (const uri of ['test://no-such-resource', 'test://template/123/nodata', 'file:///etc/passwd']) {
        const r = await s.request('resources/read', { uri });
        assertError(r, -32002);
        assert.equal(r.error.data?.uri, uri);
      }
      const sub = await s.request('resources/subscribe', { uri: 'test://no-such-resource' });
      assertError(sub, -32002);
      assert.equal(sub.error.data?.uri, 'test://no-such-resource');
      // Unsubscribing something never subscribed is a no-op.
      const unsub = await s.request('resources/unsubscribe', { uri: 'test://static-text' });
      assert.deepEqual(assertResult(unsub), {});
    });
  });
});

describe('stdio: tool results', () => {
  const probe = async (s, args) => {
    const r = assertResult(await s.request('tools/call', callParams('schema_probe', args)));
    return r;
  };
  const expectInvalid = async (s, args, lines) => {
    const r = await probe(s, args);
    assert.equal(r.isError, true, `expected isError for ${JSON.stringify(args)}: ${JSON.stringify(r)}`);
    assert.equal(r.structuredContent, undefined, 'isError result carries structuredContent');
    assert.equal(firstText(r), validationText('schema_probe', lines));
    const te = r._meta?.['trove/error'];
    assert.equal(te?.code, 'INVALID_INPUT', `_meta["trove/error"]: ${JSON.stringify(r._meta)}`);
    assert.equal(te?.category, 'validation');
    assert.ok(Array.isArray(te?.errors), '_meta["trove/error"].errors');
    assert.equal(te.errors.length, lines.length, JSON.stringify(te.errors));
    for (const e of te.errors) assert.ok(typeof e.path === 'string' && typeof e.message === 'string', JSON.stringify(e));
  };

  test('schema failures are isError results with exact path lines', { timeout: 20000 }, async () => {
    await withServer(async (s) => {
      await expectInvalid(s, {}, ['arguments.depth: required property missing']);
      await expectInvalid(s, undefined, ['arguments.depth: required property missing']);
      await expectInvalid(s, { depth: 'L0', limit: '5' }, ['arguments.limit: expected integer or null, got string']);
      await expectInvalid(s, { depth: 'L0', limit: 2.5 }, ['arguments.limit: expected integer or null, got number']);
      await expectInvalid(s, { depth: 'L0', extra: 1 },
        ['arguments.extra: unexpected property (additionalProperties is false)']);
      await expectInvalid(s, { depth: 'L9' }, ['arguments.depth: must be one of "L0", "L1", "L2", "L3"; got "L9"']);
      await expectInvalid(s, { depth: 'L0', limit: 0 }, ['arguments.limit: must be at least 1; got 0']);
      await expectInvalid(s, { depth: 'L0', limit: 1001 }, ['arguments.limit: must be at most 1000; got 1001']);
      await expectInvalid(s, { depth: 'L0', 'max files': -1 }, ["arguments['max files']: must be at least 0; got -1"]);
      await expectInvalid(s, { depth: 'L0', 'max files': 'many' }, ["arguments['max files']: expected integer or null, got string"]);
      await expectInvalid(s, { depth: 'L0', include: ['a', 'b', true] }, ['arguments.include[2]: expected string, got boolean']);
      await expectInvalid(s, { depth: 'L0', include: 'a' }, ['arguments.include: expected array or null, got string']);
      await expectInvalid(s, { depth: 'L0', flag: 'yes' }, ['arguments.flag: expected boolean or null, got string']);
      await expectInvalid(s, { depth: 'L0', flag: 1 }, ['arguments.flag: expected boolean or null, got integer']);
      // Every failure, ordered by path.
      await expectInvalid(s, { limit: 'x', extra: true, flag: 'yes' }, [
        'arguments.depth: required property missing',
        'arguments.extra: unexpected property (additionalProperties is false)',
        'arguments.flag: expected boolean or null, got string',
        'arguments.limit: expected integer or null, got string',
      ]);
    });
  });

  test('valid schema_probe calls reach the handler', { timeout: 20000 }, async () => {
    await withServer(async (s) => {
      // An optional argument may also be null: it means "not given" (docs/decisions/0010).
      for (const args of [{ depth: 'L0' }, { depth: 'L3', limit: 1000, include: [], 'max files': 0, flag: false },
        { depth: 'L2', limit: null, include: null, 'max files': null, flag: null },
        { depth: 'L1', limit: 1, include: ['a', 'b'] }]) {
        const r = await probe(s, args);
        assert.notEqual(r.isError, true, `${JSON.stringify(args)}: ${JSON.stringify(r)}`);
        assert.deepEqual(r.structuredContent, { ok: true });
        assert.deepEqual(JSON.parse(firstText(r)), { ok: true });
      }
      // 30.0 is an integer (zero fractional part).
      const from = s.lines.length;
      s.send('{"jsonrpc":"2.0","id":"int30","method":"tools/call","params":{"name":"schema_probe","arguments":{"depth":"L2","limit":30.0}}}');
      const e = await s.waitForResponse('"int30"', { from });
      const r = assertResult(e.msg);
      assert.notEqual(r.isError, true, JSON.stringify(r));
      assert.deepEqual(r.structuredContent, { ok: true });
    });
  });

  test('echo returns structuredContent and its compact JSON as content[0].text', { timeout: 20000 }, async () => {
    await withServer(async (s) => {
      const tools = assertResult(await s.request('tools/list')).tools;
      const echo = tools.find((t) => t.name === 'echo');
      assert.equal(echo.inputSchema.type, 'object');
      assert.equal(echo.outputSchema?.type, 'object');
      assert.equal(echo.outputSchema?.properties?.text?.type, 'string');
      for (const text of ['hello', '', 'quote " backslash \\ newline \n tab \t', 'ünïcødé ✓ 𝄞', '</script>\u0001']) {
        const r = assertResult(await s.request('tools/call', callParams('echo', { text })));
        assert.notEqual(r.isError, true);
        assert.deepEqual(r.structuredContent, { text });
        assert.deepEqual(JSON.parse(firstText(r)), { text });
        // Compact: byte-identical to JSON.stringify for ASCII input.
        if (/^[\x20-\x7e]*$/.test(text)) assert.equal(firstText(r), JSON.stringify({ text }));
      }
    });
  });

  test('every tool with an outputSchema returns structuredContent and a text mirror of it', { timeout: 20000 }, async () => {
    const representative = { echo: { text: 'rep' }, slow: { ms: 0 }, schema_probe: { depth: 'L0' } };
    await withServer(async (s) => {
      const tools = assertResult(await s.request('tools/list')).tools.filter((t) => t.outputSchema);
      assert.ok(tools.length >= 3, `${tools.length} tools with outputSchema`);
      for (const t of tools) {
        assert.equal(t.outputSchema.type, 'object', `${t.name} outputSchema root is not an object`);
        assert.ok(t.name in representative, `no representative arguments for ${t.name}; extend this test`);
        const r = assertResult(await s.request('tools/call', callParams(t.name, representative[t.name])));
        assert.notEqual(r.isError, true, `${t.name}: ${JSON.stringify(r)}`);
        assert.ok(r.structuredContent && typeof r.structuredContent === 'object' && !Array.isArray(r.structuredContent),
          `${t.name} structuredContent`);
        for (const req of t.outputSchema.required ?? []) assert.ok(req in r.structuredContent, `${t.name}: ${req} missing`);
        assert.deepEqual(JSON.parse(firstText(r)), r.structuredContent, `${t.name} text mirror`);
      }
    });
  });

  test('slow returns {slept_ms} structured with a text mirror', { timeout: 20000 }, async () => {
    await withServer(async (s) => {
      const t0 = Date.now();
      const r = assertResult(await s.request('tools/call', callParams('slow', { ms: 120 })));
      assert.ok(Date.now() - t0 >= 100, 'slow returned too early');
      assert.deepEqual(r.structuredContent, { slept_ms: 120 });
      assert.deepEqual(JSON.parse(firstText(r)), { slept_ms: 120 });
    });
  });

  test('a throwing tool gives a sanitized INTERNAL_ERROR isError result; details go to stderr', { timeout: 20000 }, async () => {
    await withServer(async (s) => {
      const from = s.lines.length;
      const r = await s.request('tools/call', callParams('throw', {}));
      const res = assertResult(r);
      assert.equal(res.isError, true);
      assert.equal(res.structuredContent, undefined);
      const text = firstText(res);
      assert.ok(text.startsWith('INTERNAL_ERROR: internal error (ref '), text);
      const ref = /\(ref ([^)]+)\)/.exec(text)?.[1];
      assert.ok(ref, `no ref in ${text}`);
      for (const e of s.lines.slice(from)) {
        assert.ok(!e.raw.includes('/secret/path'), `exception text leaked to the client: ${e.raw}`);
      }
      await sleep(100);
      assert.ok(s.stderr.includes(ref), `ref ${ref} not in stderr: ${s.stderr.slice(-500)}`);
    });
  });

  test('test_error_handling is an isError result, not a JSON-RPC error', { timeout: 20000 }, async () => {
    await withServer(async (s) => {
      const r = assertResult(await s.request('tools/call', callParams('test_error_handling', {})));
      assert.equal(r.isError, true);
      assert.ok(firstText(r).length > 0);
    });
  });

  test('tools/list: every tool has a description, object inputSchema and all four annotations', { timeout: 20000 }, async () => {
    await withServer(async (s) => {
      const tools = assertResult(await s.request('tools/list')).tools;
      const names = tools.map((t) => t.name);
      for (const n of ['echo', 'slow', 'throw', 'schema_probe', 'test_simple_text', 'json_schema_2020_12_tool']) {
        assert.ok(names.includes(n), `${n} missing from tools/list`);
      }
      assert.equal(new Set(names).size, names.length, 'duplicate tool names');
      for (const t of tools) {
        assert.match(t.name, /^[A-Za-z0-9_.-]{1,128}$/);
        assert.equal(typeof t.description, 'string', `${t.name} description`);
        assert.ok(t.description.length > 0);
        assert.equal(t.inputSchema?.type, 'object', `${t.name} inputSchema`);
        for (const h of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint']) {
          assert.equal(typeof t.annotations?.[h], 'boolean', `${t.name} annotations.${h}`);
        }
      }
      const probe = tools.find((t) => t.name === 'schema_probe').inputSchema;
      assert.equal(probe.additionalProperties, false);
      assert.deepEqual(probe.required, ['depth']);
      assert.deepEqual(probe.properties.depth.enum, ['L0', 'L1', 'L2', 'L3']);
      const js = tools.find((t) => t.name === 'json_schema_2020_12_tool').inputSchema;
      assert.equal(js.$schema, 'https://json-schema.org/draft/2020-12/schema');
      assert.equal(js.$defs?.address?.type, 'object');
      assert.equal(js.properties?.address?.$ref, '#/$defs/address');
      assert.equal(js.additionalProperties, false);
    });
  });
});

describe('stdio: concurrency, cancellation, progress', () => {
  test('a duplicate in-flight id gets -32600 while the original continues and is answered once', { timeout: 20000 }, async () => {
    await withServer(async (s) => {
      const from = s.lines.length;
      s.send('{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"slow","arguments":{"ms":800}}}');
      await sleep(100);
      s.send('{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"echo","arguments":{"text":"dup"}}}');
      const first = await s.waitForResponse('42', { from, timeout: 700 });
      assertError(first.msg, -32600);
      const second = await s.waitFor((e) => e.id === '42' && e.index > first.index, { from, timeout: 5000, what: 'slow result' });
      assert.deepEqual(assertResult(second.msg).structuredContent, { slept_ms: 800 });
      await s.quiet(300);
      assert.equal(s.entriesWithId('42').length, 2, 'id 42 must be answered exactly twice (duplicate error + result)');
      // The same digits as a string are a different id.
      s.send('{"jsonrpc":"2.0","id":43,"method":"tools/call","params":{"name":"slow","arguments":{"ms":300}}}');
      s.send('{"jsonrpc":"2.0","id":"43","method":"tools/call","params":{"name":"echo","arguments":{"text":"str"}}}');
      const str = await s.waitForResponse('"43"');
      assert.deepEqual(assertResult(str.msg).structuredContent, { text: 'str' });
      const num = await s.waitForResponse('43');
      assert.deepEqual(assertResult(num.msg).structuredContent, { slept_ms: 300 });
    });
  });

  test('a cancelled request is never answered', { timeout: 20000 }, async () => {
    await withServer(async (s) => {
      const from = s.lines.length;
      s.send('{"jsonrpc":"2.0","id":77,"method":"tools/call","params":{"name":"slow","arguments":{"ms":3000}}}');
      await sleep(200);
      s.notify('notifications/cancelled', { requestId: 77, reason: 'test' });
      await sleep(3500);
      assert.deepEqual(s.entriesWithId('77').map((e) => e.raw), [], 'cancelled request was answered');
      assert.deepEqual(s.lines.slice(from).map((e) => e.raw), []);
      await assertAlive(s);
      // The id is free again after cancellation.
      const r = await s.request('tools/call', callParams('echo', { text: 'after' }), { id: 77 });
      assert.deepEqual(assertResult(r).structuredContent, { text: 'after' });
    });
  });

  test('cancellation matches the id type exactly', { timeout: 20000 }, async () => {
    await withServer(async (s) => {
      s.send('{"jsonrpc":"2.0","id":78,"method":"tools/call","params":{"name":"slow","arguments":{"ms":500}}}');
      await sleep(100);
      s.notify('notifications/cancelled', { requestId: '78' });
      const e = await s.waitForResponse('78', { timeout: 5000 });
      assert.deepEqual(assertResult(e.msg).structuredContent, { slept_ms: 500 });
    });
  });

  test('progress increases, precedes the response and stops after it', { timeout: 20000 }, async () => {
    await withServer(async (s) => {
      for (const token of ['"p-1"', '9007199254740993', '0']) {
        const from = s.lines.length;
        s.send(`{"jsonrpc":"2.0","id":"prog","method":"tools/call","params":{"name":"slow","arguments":{"ms":300},"_meta":{"progressToken":${token}}}}`);
        const resp = await s.waitForResponse('"prog"', { from });
        assert.deepEqual(assertResult(resp.msg).structuredContent, { slept_ms: 300 });
        await s.quiet(400);
        const all = s.lines.slice(from);
        const progress = all.filter((e) => e.msg?.method === 'notifications/progress');
        assert.ok(progress.length >= 3, `only ${progress.length} progress notifications for token ${token}`);
        for (const p of progress) {
          assert.equal(rawValueAt(p.raw, ['params', 'progressToken']), token, `token changed: ${p.raw}`);
          assert.ok(p.index < resp.index, `progress after the response: ${p.raw}`);
          assert.equal(typeof p.msg.params.progress, 'number');
        }
        for (let i = 1; i < progress.length; i++) {
          assert.ok(progress[i].msg.params.progress > progress[i - 1].msg.params.progress,
            `progress not increasing: ${progress.map((p) => p.msg.params.progress)}`);
        }
        assert.equal(all.length, progress.length + 1, 'unexpected extra output');
      }
    });
  });

  test('no progress without a progress token', { timeout: 20000 }, async () => {
    await withServer(async (s) => {
      const from = s.lines.length;
      const r = await s.request('tools/call', callParams('slow', { ms: 200 }));
      assertResult(r);
      await s.quiet(300);
      assert.deepEqual(s.lines.slice(from).filter((e) => e.msg?.method).map((e) => e.raw), []);
    });
  });

  test('test_tool_with_progress reports >= 3 increasing progress values before its result', { timeout: 20000 }, async () => {
    await withServer(async (s) => {
      const from = s.lines.length;
      const r = await s.request('tools/call', callParams('test_tool_with_progress', {}, { progressToken: 'fixture' }), { id: 'fp' });
      assertResult(r);
      const progress = s.lines.slice(from).filter((e) => e.msg?.method === 'notifications/progress');
      assert.ok(progress.length >= 3);
      const values = progress.map((p) => p.msg.params.progress);
      assert.deepEqual(values, [...values].sort((a, b) => a - b));
      assert.ok(progress.every((p) => p.msg.params.progressToken === 'fixture'));
    });
  });

  test('test_tool_with_logging sends >= 3 log messages at debug level, none after the result', { timeout: 20000 }, async () => {
    await withServer(async (s) => {
      assert.deepEqual(assertResult(await s.request('logging/setLevel', { level: 'debug' })), {});
      const from = s.lines.length;
      const r = await s.request('tools/call', callParams('test_tool_with_logging', {}), { id: 'log' });
      assert.notEqual(assertResult(r).isError, true);
      await s.quiet(300);
      const lines = s.lines.slice(from);
      const respIdx = lines.findIndex((e) => e.id === '"log"');
      const logs = lines.filter((e) => e.msg?.method === 'notifications/message');
      assert.ok(logs.length >= 3, `${logs.length} log messages`);
      for (const l of logs) {
        assert.ok(lines.indexOf(l) < respIdx, 'log message after the response');
        assert.ok(['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'].includes(l.msg.params.level));
        assert.ok('data' in l.msg.params);
      }
    });
  });

  test('with the log threshold at emergency, test_tool_with_logging sends no info messages', { timeout: 20000 }, async () => {
    await withServer(async (s) => {
      assert.deepEqual(assertResult(await s.request('logging/setLevel', { level: 'emergency' })), {});
      const from = s.lines.length;
      assertResult(await s.request('tools/call', callParams('test_tool_with_logging', {})));
      await s.quiet(200);
      const logs = s.lines.slice(from).filter((e) => e.msg?.method === 'notifications/message');
      assert.deepEqual(logs.filter((l) => l.msg.params.level !== 'emergency').map((l) => l.raw), []);
    });
  });

  const pipelineEcho = (s, n) => {
    const parts = [];
    for (let i = 1; i <= n; i++) {
      parts.push(`{"jsonrpc":"2.0","id":${i},"method":"tools/call","params":{"name":"echo","arguments":{"text":"m${i}"}}}\n`);
    }
    s.sendRaw(parts.join(''));
  };
  const countById = (s, from) => {
    const counts = new Map();
    for (const e of s.lines.slice(from)) {
      if (e.msg && e.msg.method === undefined) counts.set(e.id, (counts.get(e.id) ?? 0) + 1);
    }
    return counts;
  };

  test('1000 pipelined calls with --max-in-flight 1000 are each answered exactly once', { timeout: 40000 }, async () => {
    await withServer(async (s) => {
      const from = s.lines.length;
      pipelineEcho(s, 1000);
      await s.waitForCount((e) => e.msg && e.msg.method === undefined, 1000, { from, timeout: 30000, what: 'responses' });
      await s.quiet(300);
      const counts = countById(s, from);
      for (let i = 1; i <= 1000; i++) assert.equal(counts.get(String(i)), 1, `id ${i} answered ${counts.get(String(i)) ?? 0} times`);
      assert.equal(counts.size, 1000, 'responses with ids never sent');
      for (const e of s.lines.slice(from)) {
        assert.deepEqual(assertResult(e.msg).structuredContent, { text: `m${e.id}` });
      }
    }, { args: ['--max-in-flight', '1000'] });
  });

  test('1000 pipelined calls with the default limit: each answered once, result or retryable -32000', { timeout: 40000 }, async () => {
    await withServer(async (s) => {
      const from = s.lines.length;
      pipelineEcho(s, 1000);
      await s.waitForCount((e) => e.msg && e.msg.method === undefined, 1000, { from, timeout: 30000, what: 'responses' });
      await s.quiet(300);
      const counts = countById(s, from);
      for (let i = 1; i <= 1000; i++) assert.equal(counts.get(String(i)), 1, `id ${i} answered ${counts.get(String(i)) ?? 0} times`);
      assert.equal(counts.size, 1000);
      for (const e of s.lines.slice(from)) {
        if (e.msg.error) {
          assertError(e.msg, -32000, 'too many requests in flight');
          assert.equal(e.msg.error.data?.retryable, true);
        } else {
          assert.deepEqual(e.msg.result.structuredContent, { text: `m${e.id}` });
        }
      }
    });
  });

  test('300 pipelined slow calls: 256 accepted, 44 rejected -32000, none lost; ping still answered', { timeout: 40000 }, async () => {
    await withServer(async (s) => {
      const from = s.lines.length;
      const parts = [];
      for (let i = 1; i <= 300; i++) {
        parts.push(`{"jsonrpc":"2.0","id":${i},"method":"tools/call","params":{"name":"slow","arguments":{"ms":600}}}\n`);
      }
      s.sendRaw(parts.join(''));
      await sleep(50);
      const t0 = Date.now();
      const ping = await s.request('ping', undefined, { id: 'ctl', timeout: 2000 });
      assert.deepEqual(assertResult(ping), {});
      assert.ok(Date.now() - t0 < 300, `ping took ${Date.now() - t0} ms behind busy workers`);
      await s.waitForCount((e) => e.msg && e.msg.method === undefined && e.id !== '"ctl"', 300,
        { from, timeout: 30000, what: 'responses' });
      await s.quiet(300);
      const counts = countById(s, from);
      let ok = 0;
      let busy = 0;
      for (let i = 1; i <= 300; i++) assert.equal(counts.get(String(i)), 1, `id ${i} answered ${counts.get(String(i)) ?? 0} times`);
      for (const e of s.lines.slice(from)) {
        if (e.id === '"ctl"') continue;
        if (e.msg.error) {
          assertError(e.msg, -32000, 'too many requests in flight');
          assert.equal(e.msg.error.data?.retryable, true);
          assert.ok(Number(e.id) > 256, `request ${e.id} rejected although within the first 256`);
          busy++;
        } else {
          assert.deepEqual(e.msg.result.structuredContent, { slept_ms: 600 });
          ok++;
        }
      }
      assert.equal(ok, 256);
      assert.equal(busy, 44);
    }, { args: ['--workers', '64'] });
  });
});

describe('stdio: server to client requests', () => {
  test('without the sampling capability no sampling request is sent', { timeout: 20000 }, async () => {
    await withServer(async (s) => {
      const from = s.lines.length;
      const r = await s.request('tools/call', callParams('test_sampling', { prompt: 'hi' }), { timeout: 5000 });
      assert.ok(r.result || r.error, 'no response');
      assert.deepEqual(s.lines.slice(from).filter((e) => e.msg?.method === 'sampling/createMessage').map((e) => e.raw), []);
    });
  });

  test('sampling over raw stdio: integer request id, the answer reaches the tool', { timeout: 20000 }, async () => {
    await withServer(async (s) => {
      const from = s.lines.length;
      s.send(JSON.stringify({ jsonrpc: '2.0', id: 'samp', method: 'tools/call', params: callParams('test_sampling', { prompt: 'What is 2+2?' }) }));
      const req = await s.waitFor((e) => e.msg?.method === 'sampling/createMessage', { from });
      assert.ok(Number.isInteger(req.msg.id), `server request id ${req.id}`);
      assert.deepEqual(req.msg.params.messages, [{ role: 'user', content: { type: 'text', text: 'What is 2+2?' } }]);
      assert.equal(typeof req.msg.params.maxTokens, 'number');
      s.send(`{"jsonrpc":"2.0","id":${req.id},"result":{"role":"assistant","content":{"type":"text","text":"FOUR-e2e"},"model":"m","stopReason":"endTurn"}}`);
      const resp = await s.waitForResponse('"samp"', { from });
      const r = assertResult(resp.msg);
      assert.notEqual(r.isError, true);
      assert.ok(firstText(r).includes('FOUR-e2e'), firstText(r));
    }, { initOpts: { capabilities: { sampling: {} } } });
  });
});

describe('stdio: shutdown and output hygiene', () => {
  test('stdin EOF exits 0 within 1 s', { timeout: 20000 }, async () => {
    const s = await StdioServer.start();
    await s.initialize();
    await assertAlive(s);
    const t0 = Date.now();
    s.closeStdin();
    const ex = await s.waitExit(5000);
    const ms = ex.t - t0;
    assert.equal(ex.code, 0, `exit ${JSON.stringify(ex)}`);
    assert.ok(ms <= 1000, `exit took ${ms} ms`);
  });

  test('stdin EOF before initialize exits 0', { timeout: 20000 }, async () => {
    const s = await StdioServer.start();
    const t0 = Date.now();
    s.closeStdin();
    const ex = await s.waitExit(5000);
    assert.equal(ex.code, 0);
    assert.ok(ex.t - t0 <= 1000, `exit took ${ex.t - t0} ms`);
  });

  test('stdin EOF with a slow call in flight cancels it and exits 0 within 1 s, unanswered', { timeout: 20000 }, async () => {
    const s = await StdioServer.start();
    await s.initialize();
    s.send('{"jsonrpc":"2.0","id":"long","method":"tools/call","params":{"name":"slow","arguments":{"ms":20000}}}');
    await sleep(200);
    const t0 = Date.now();
    s.closeStdin();
    const ex = await s.waitExit(5000);
    assert.equal(ex.code, 0, `exit ${JSON.stringify(ex)}`);
    assert.ok(ex.t - t0 <= 1000, `exit took ${ex.t - t0} ms`);
    assert.deepEqual(s.entriesWithId('"long"').map((e) => e.raw), []);
    assert.deepEqual(s.violations, []);
  });

  test('SIGTERM exits 0 promptly', { timeout: 20000 }, async () => {
    const s = await StdioServer.start();
    await s.initialize();
    const t0 = Date.now();
    s.proc.kill('SIGTERM');
    const ex = await s.waitExit(5000);
    assert.equal(ex.code, 0, `exit ${JSON.stringify(ex)}`);
    assert.ok(ex.t - t0 <= 1000, `exit took ${ex.t - t0} ms`);
  });

  test('stdout carries only JSON-RPC lines under debug logging, errors and exceptions', { timeout: 20000 }, async () => {
    await withServer(async (s) => {
      s.send('garbage');
      s.send('[1,2]');
      await s.request('logging/setLevel', { level: 'debug' });
      await s.request('tools/call', callParams('throw', {}));
      await s.request('tools/call', callParams('test_tool_with_logging', {}));
      await s.request('tools/call', callParams('test_error_handling', {}));
      await s.request('tools/call', callParams('schema_probe', { depth: 1 }));
      await s.request('no/such/method');
      await s.request('resources/read', { uri: 'test://static-binary' });
      await s.quiet(300);
      assert.ok(s.lines.length >= 8);
      for (const e of s.lines) assert.ok(e.raw.length > 0 && !e.raw.includes('\r'), `odd line: ${JSON.stringify(e.raw.slice(0, 100))}`);
      // withServer asserts s.violations is empty.
    }, { args: ['--log-level', 'debug'] });
  });
});
