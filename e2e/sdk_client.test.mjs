// The official TypeScript SDK client (@modelcontextprotocol/sdk 1.32.2) against the fixture server
// over stdio and Streamable HTTP (docs/mcp.md §6.2, §6.6). The SDK validates structuredContent
// against outputSchema and rejects a result that lacks it.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema, ElicitRequestSchema, LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema, McpError,
} from '@modelcontextprotocol/sdk/types.js';
import { SERVER_BIN, requireServerBinary, sleep, withTimeout } from './lib/env.mjs';
import { startHttpServer } from './lib/http.mjs';

const FIXTURE_TOOLS = [
  'test_simple_text', 'test_image_content', 'test_audio_content', 'test_embedded_resource',
  'test_multiple_content_types', 'test_tool_with_logging', 'test_error_handling', 'test_tool_with_progress',
  'test_sampling', 'test_elicitation', 'test_elicitation_sep1034_defaults', 'test_elicitation_sep1330_enums',
  'test_reconnection', 'json_schema_2020_12_tool', 'echo', 'slow', 'throw', 'schema_probe',
];
const FIXTURE_RESOURCES = ['test://static-text', 'test://static-binary', 'test://watched-resource', 'test://example-resource'];
const FIXTURE_PROMPTS = ['test_simple_prompt', 'test_prompt_with_arguments', 'test_prompt_with_embedded_resource', 'test_prompt_with_image'];
const SAMPLED = 'SAMPLED-ANSWER-e2e-42';
const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function isStrictBase64(s) {
  return typeof s === 'string' && s.length > 0 && s.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(s);
}

function textOf(result) {
  assert.ok(Array.isArray(result.content) && result.content.length > 0, `no content: ${JSON.stringify(result)}`);
  const t = result.content.find((c) => c.type === 'text');
  assert.ok(t, `no text item: ${JSON.stringify(result.content)}`);
  return t.text;
}

async function expectMcpError(promise, code) {
  await assert.rejects(promise, (e) => {
    assert.ok(e instanceof McpError, `not an McpError: ${e}`);
    assert.equal(e.code, code, `code ${e.code}: ${e.message}`);
    return true;
  });
}

// Client with sampling and elicitation handlers that record what the server asked.
function makeClient(state) {
  const client = new Client({ name: 'trove-e2e-sdk', version: '0.0.0' },
    { capabilities: { sampling: {}, elicitation: {} } });
  client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
    state.sampling.push(req.params);
    return { role: 'assistant', content: { type: 'text', text: SAMPLED }, model: 'e2e-model', stopReason: 'endTurn' };
  });
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    state.elicitation.push(req.params);
    const props = req.params.requestedSchema?.properties ?? {};
    if (state.elicitAction !== 'accept') return { action: state.elicitAction };
    if (props.username && props.email) {
      return { action: 'accept', content: { username: 'alice-e2e', email: 'alice@example.com' } };
    }
    const content = {};
    for (const [k, p] of Object.entries(props)) {
      if (p.default !== undefined) content[k] = p.default;
      else if (p.type === 'array') content[k] = [p.items?.enum?.[0] ?? p.items?.anyOf?.[0]?.const];
      else if (p.enum) content[k] = p.enum[0];
      else if (p.oneOf) content[k] = p.oneOf[0].const;
      else if (p.type === 'string') content[k] = 'x';
    }
    return { action: 'accept', content };
  });
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => { state.logs.push({ ...n.params, t: Date.now() }); });
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => { state.updates.push({ ...n.params, t: Date.now() }); });
  return client;
}

for (const mode of ['stdio', 'http']) {
  describe(`SDK client over ${mode}`, () => {
    const state = { sampling: [], elicitation: [], logs: [], updates: [], errors: [], wire: [], elicitAction: 'accept' };
    let client;
    let srv;
    let stderrText = '';

    before(async () => {
      client = makeClient(state);
      let transport;
      if (mode === 'stdio') {
        requireServerBinary();
        transport = new StdioClientTransport({ command: SERVER_BIN, args: [], stderr: 'pipe' });
        transport.stderr?.on('data', (c) => { stderrText += c.toString(); });
      } else {
        srv = await startHttpServer();
        transport = new StreamableHTTPClientTransport(new URL(srv.url));
      }
      client.onerror = (e) => state.errors.push(String(e?.stack ?? e));
      await withTimeout(client.connect(transport), 10000, 'SDK client connect');
      // Record every inbound message in wire order, before the SDK dispatches it.
      const dispatch = transport.onmessage;
      transport.onmessage = (msg, extra) => {
        state.wire.push(msg);
        dispatch(msg, extra);
      };
    });

    after(async () => {
      await client?.close().catch(() => {});
      if (srv) await srv.stop();
    });

    test('initialize: server info and capabilities', { timeout: 20000 }, async () => {
      const info = client.getServerVersion();
      assert.equal(typeof info?.name, 'string');
      assert.equal(typeof info?.version, 'string');
      const caps = client.getServerCapabilities();
      assert.ok(caps?.tools, 'tools capability');
      assert.equal(caps?.resources?.subscribe, true);
      assert.ok(caps?.prompts, 'prompts capability');
      assert.ok(caps?.logging, 'logging capability');
      assert.ok(caps?.completions, 'completions capability');
    });

    test('ping and setLoggingLevel return {}', { timeout: 20000 }, async () => {
      assert.deepEqual(await client.ping(), {});
      for (const level of ['debug', 'info', 'warning', 'error']) {
        assert.deepEqual(await client.setLoggingLevel(level), {});
      }
    });

    test('tools/list lists every fixture with a description and an object inputSchema', { timeout: 20000 }, async () => {
      const { tools, nextCursor } = await client.listTools();
      assert.equal(nextCursor, undefined);
      const names = tools.map((t) => t.name);
      for (const n of FIXTURE_TOOLS) assert.ok(names.includes(n), `${n} missing`);
      for (const t of tools) {
        assert.ok(t.description && t.description.length > 0, `${t.name} has no description`);
        assert.equal(t.inputSchema.type, 'object');
      }
      const echo = tools.find((t) => t.name === 'echo');
      assert.equal(echo.outputSchema?.type, 'object');
      const js = tools.find((t) => t.name === 'json_schema_2020_12_tool').inputSchema;
      assert.equal(js.$schema, 'https://json-schema.org/draft/2020-12/schema');
      assert.equal(js.$defs.address.type, 'object');
      assert.equal(js.properties.address.$ref, '#/$defs/address');
      assert.equal(js.additionalProperties, false);
    });

    test('echo: structured output validated by the SDK, with a text mirror', { timeout: 20000 }, async () => {
      for (const text of ['hello', 'ünï "q" \\ \n', '']) {
        const r = await client.callTool({ name: 'echo', arguments: { text } });
        assert.notEqual(r.isError, true);
        assert.deepEqual(r.structuredContent, { text });
        assert.equal(r.content[0].type, 'text');
        assert.deepEqual(JSON.parse(r.content[0].text), { text });
        if (/^[\x20-\x7e]*$/.test(text)) assert.equal(r.content[0].text, JSON.stringify({ text }));
      }
    });

    test('schema_probe: valid call is structured, invalid call is an isError result', { timeout: 20000 }, async () => {
      const ok = await client.callTool({ name: 'schema_probe', arguments: { depth: 'L1', limit: 10, include: ['a'], 'max files': 3, flag: true } });
      assert.notEqual(ok.isError, true);
      assert.deepEqual(ok.structuredContent, { ok: true });
      const bad = await client.callTool({ name: 'schema_probe', arguments: { depth: 'L0', limit: '5' } });
      assert.equal(bad.isError, true);
      assert.equal(textOf(bad), "invalid arguments for tool 'schema_probe':\narguments.limit: expected integer or null, got string");
    });

    test('an unknown tool is a -32602 protocol error', { timeout: 20000 }, async () => {
      await expectMcpError(client.callTool({ name: 'no_such_tool', arguments: {} }), -32602);
    });

    test('test_simple_text returns non-empty text', { timeout: 20000 }, async () => {
      const r = await client.callTool({ name: 'test_simple_text', arguments: {} });
      assert.notEqual(r.isError, true);
      assert.equal(r.content[0].type, 'text');
      assert.ok(r.content[0].text.length > 0);
    });

    test('test_image_content returns a base64 PNG', { timeout: 20000 }, async () => {
      const r = await client.callTool({ name: 'test_image_content', arguments: {} });
      const img = r.content.find((c) => c.type === 'image');
      assert.ok(img, JSON.stringify(r));
      assert.equal(img.mimeType, 'image/png');
      assert.ok(isStrictBase64(img.data), 'image data is not padded standard base64');
      assert.ok(Buffer.from(img.data, 'base64').subarray(0, 8).equals(PNG_MAGIC), 'not a PNG');
    });

    test('test_audio_content returns a base64 WAV as audio/wav', { timeout: 20000 }, async () => {
      const r = await client.callTool({ name: 'test_audio_content', arguments: {} });
      const audio = r.content.find((c) => c.type === 'audio');
      assert.ok(audio, JSON.stringify(r));
      assert.equal(audio.mimeType, 'audio/wav');
      assert.ok(isStrictBase64(audio.data));
      const b = Buffer.from(audio.data, 'base64');
      assert.equal(b.subarray(0, 4).toString('latin1'), 'RIFF');
      assert.equal(b.subarray(8, 12).toString('latin1'), 'WAVE');
    });

    test('test_embedded_resource returns a resource item with uri, mimeType and text', { timeout: 20000 }, async () => {
      const r = await client.callTool({ name: 'test_embedded_resource', arguments: {} });
      const res = r.content.find((c) => c.type === 'resource');
      assert.ok(res, JSON.stringify(r));
      assert.equal(typeof res.resource.uri, 'string');
      assert.equal(typeof res.resource.mimeType, 'string');
      assert.ok(typeof res.resource.text === 'string' || isStrictBase64(res.resource.blob));
    });

    test('test_multiple_content_types returns text, image and resource items', { timeout: 20000 }, async () => {
      const r = await client.callTool({ name: 'test_multiple_content_types', arguments: {} });
      const types = r.content.map((c) => c.type);
      assert.ok(r.content.length >= 2);
      for (const t of ['text', 'image', 'resource']) assert.ok(types.includes(t), `${t} missing from ${types}`);
    });

    test('test_tool_with_logging sends >= 3 log messages during the call', { timeout: 20000 }, async () => {
      await client.setLoggingLevel('debug');
      const before = state.logs.length;
      const t0 = Date.now();
      const r = await client.callTool({ name: 'test_tool_with_logging', arguments: {} });
      const t1 = Date.now();
      assert.notEqual(r.isError, true);
      assert.ok(textOf(r).length > 0);
      const logs = state.logs.slice(before);
      assert.ok(logs.length >= 3, `${logs.length} log messages`);
      for (const l of logs) {
        assert.ok(l.t >= t0 && l.t <= t1, 'log message outside the call');
        assert.ok('data' in l);
      }
    });

    test('test_error_handling is an isError result with text', { timeout: 20000 }, async () => {
      const r = await client.callTool({ name: 'test_error_handling', arguments: {} });
      assert.equal(r.isError, true);
      assert.ok(textOf(r).length > 0);
    });

    // Progress is checked on the wire: the SDK dispatches notifications a microtask later than
    // responses, so over stdio it drops a final progress notification that arrives in the same read
    // as the response ("unknown token") although the server sent it first.
    const callWithProgress = async (params) => {
      const from = state.wire.length;
      const seen = [];
      const r = await client.callTool(params, undefined, { onprogress: (p) => seen.push(p) });
      const wire = state.wire.slice(from);
      const respIdx = wire.findIndex((m) => m.id !== undefined && m.method === undefined);
      assert.ok(respIdx >= 0, 'response not seen on the wire');
      const token = wire[respIdx].id;
      const progress = wire.map((m, i) => ({ m, i })).filter(({ m }) => m.method === 'notifications/progress');
      for (const { m, i } of progress) {
        assert.equal(m.params.progressToken, token, `progress for another token: ${JSON.stringify(m)}`);
        assert.ok(i < respIdx, `progress after the response: ${JSON.stringify(m)}`);
      }
      const values = progress.map(({ m }) => m.params.progress);
      for (let i = 1; i < values.length; i++) assert.ok(values[i] > values[i - 1], `progress not increasing: ${values}`);
      return { r, values, seen };
    };

    test('test_tool_with_progress reports >= 3 increasing progress values', { timeout: 20000 }, async () => {
      const { r, values } = await callWithProgress({ name: 'test_tool_with_progress', arguments: {} });
      assert.notEqual(r.isError, true);
      assert.ok(values.length >= 3, `${values.length} progress notifications`);
    });

    test('slow reports progress and returns {slept_ms}', { timeout: 20000 }, async () => {
      const { r, values } = await callWithProgress({ name: 'slow', arguments: { ms: 200 } });
      assert.deepEqual(r.structuredContent, { slept_ms: 200 });
      assert.ok(values.length >= 3, `${values.length} progress notifications`);
    });

    test('throw yields a sanitized INTERNAL_ERROR isError result', { timeout: 20000 }, async () => {
      const r = await client.callTool({ name: 'throw', arguments: {} });
      assert.equal(r.isError, true);
      assert.ok(textOf(r).startsWith('INTERNAL_ERROR: internal error (ref '), textOf(r));
      assert.ok(!JSON.stringify(r).includes('/secret/path'));
    });

    test('test_sampling sends sampling/createMessage and returns the answer', { timeout: 20000 }, async () => {
      const before = state.sampling.length;
      const r = await client.callTool({ name: 'test_sampling', arguments: { prompt: 'Say the magic word' } });
      assert.notEqual(r.isError, true);
      assert.equal(state.sampling.length, before + 1, 'sampling requests');
      const req = state.sampling[before];
      assert.deepEqual(req.messages, [{ role: 'user', content: { type: 'text', text: 'Say the magic word' } }]);
      assert.equal(typeof req.maxTokens, 'number');
      assert.ok(textOf(r).includes(SAMPLED), textOf(r));
    });

    test('test_elicitation sends username/email form and reflects the answer', { timeout: 20000 }, async () => {
      const before = state.elicitation.length;
      const r = await client.callTool({ name: 'test_elicitation', arguments: { message: 'Who are you?' } });
      assert.notEqual(r.isError, true);
      assert.equal(state.elicitation.length, before + 1);
      const req = state.elicitation[before];
      assert.equal(req.message, 'Who are you?');
      assert.equal(req.requestedSchema.type, 'object');
      assert.equal(req.requestedSchema.properties.username.type, 'string');
      assert.equal(req.requestedSchema.properties.email.type, 'string');
      const text = textOf(r);
      for (const s of ['accept', 'alice-e2e', 'alice@example.com']) assert.ok(text.includes(s), `${s} not in ${text}`);
    });

    test('test_elicitation handles decline and cancel', { timeout: 20000 }, async () => {
      for (const action of ['decline', 'cancel']) {
        state.elicitAction = action;
        try {
          const r = await client.callTool({ name: 'test_elicitation', arguments: { message: 'again?' } });
          assert.ok(textOf(r).includes(action), `${action} not in ${textOf(r)}`);
        } finally {
          state.elicitAction = 'accept';
        }
      }
    });

    test('test_elicitation_sep1034_defaults elicits the five defaults', { timeout: 20000 }, async () => {
      const before = state.elicitation.length;
      const r = await client.callTool({ name: 'test_elicitation_sep1034_defaults', arguments: {} });
      assert.notEqual(r.isError, true);
      const p = state.elicitation[before].requestedSchema.properties;
      assert.deepEqual([p.name.type, p.name.default], ['string', 'John Doe']);
      assert.deepEqual([p.age.type, p.age.default], ['integer', 30]);
      assert.deepEqual([p.score.type, p.score.default], ['number', 95.5]);
      assert.equal(p.status.type, 'string');
      assert.ok(Array.isArray(p.status.enum) && p.status.enum.includes('active'));
      assert.equal(p.status.default, 'active');
      assert.deepEqual([p.verified.type, p.verified.default], ['boolean', true]);
      const text = textOf(r);
      assert.ok(text.includes('accept') && text.includes('John Doe'), text);
    });

    test('test_elicitation_sep1330_enums elicits the five enum shapes', { timeout: 20000 }, async () => {
      const before = state.elicitation.length;
      const r = await client.callTool({ name: 'test_elicitation_sep1330_enums', arguments: {} });
      assert.notEqual(r.isError, true);
      const props = Object.values(state.elicitation[before].requestedSchema.properties);
      const has = (pred, what) => assert.ok(props.some(pred), `no ${what} property in ${JSON.stringify(props)}`);
      has((p) => p.type === 'string' && Array.isArray(p.enum) && !p.enumNames && !p.oneOf, 'untitled single-select');
      has((p) => p.type === 'string' && Array.isArray(p.oneOf) && p.oneOf.every((o) => 'const' in o && 'title' in o), 'titled single-select');
      has((p) => Array.isArray(p.enum) && Array.isArray(p.enumNames) && p.enumNames.length === p.enum.length, 'legacy enumNames');
      has((p) => p.type === 'array' && Array.isArray(p.items?.enum), 'untitled multi-select');
      has((p) => p.type === 'array' && Array.isArray(p.items?.anyOf) && p.items.anyOf.every((o) => 'const' in o && 'title' in o), 'titled multi-select');
      assert.ok(textOf(r).includes('accept'));
    });

    test('test_reconnection returns its result', { timeout: 30000 }, async () => {
      const r = await client.callTool({ name: 'test_reconnection', arguments: {} }, undefined, { timeout: 25000 });
      assert.notEqual(r.isError, true);
      assert.ok(textOf(r).length > 0);
    });

    test('json_schema_2020_12_tool validates through $ref', { timeout: 20000 }, async () => {
      const ok = await client.callTool({ name: 'json_schema_2020_12_tool', arguments: { name: 'n', address: { street: 's', city: 'c' } } });
      assert.notEqual(ok.isError, true, JSON.stringify(ok));
      const extra = await client.callTool({ name: 'json_schema_2020_12_tool', arguments: { name: 'n', zip: '1' } });
      assert.equal(extra.isError, true);
      assert.equal(textOf(extra), "invalid arguments for tool 'json_schema_2020_12_tool':\narguments.zip: unexpected property (additionalProperties is false)");
      const viaRef = await client.callTool({ name: 'json_schema_2020_12_tool', arguments: { address: { street: true } } });
      assert.equal(viaRef.isError, true);
      assert.equal(textOf(viaRef), "invalid arguments for tool 'json_schema_2020_12_tool':\narguments.address.street: expected string, got boolean");
    });

    test('resources/list and resources/templates/list', { timeout: 20000 }, async () => {
      const { resources, nextCursor } = await client.listResources();
      assert.equal(nextCursor, undefined);
      for (const uri of FIXTURE_RESOURCES) {
        const r = resources.find((x) => x.uri === uri);
        assert.ok(r, `${uri} missing`);
        assert.ok(r.name.length > 0);
      }
      const { resourceTemplates } = await client.listResourceTemplates();
      const t = resourceTemplates.find((x) => x.uriTemplate === 'test://template/{id}/data');
      assert.ok(t, JSON.stringify(resourceTemplates));
      assert.ok(t.name.length > 0);
    });

    test('every resource reads back', { timeout: 20000 }, async () => {
      const text = await client.readResource({ uri: 'test://static-text' });
      assert.equal(text.contents[0].uri, 'test://static-text');
      assert.equal(text.contents[0].mimeType, 'text/plain');
      assert.ok(text.contents[0].text.length > 0);
      const bin = await client.readResource({ uri: 'test://static-binary' });
      assert.equal(bin.contents[0].uri, 'test://static-binary');
      assert.ok(isStrictBase64(bin.contents[0].blob), 'blob is not padded standard base64');
      assert.equal(typeof bin.contents[0].mimeType, 'string');
      if (bin.contents[0].mimeType === 'image/png') {
        assert.ok(Buffer.from(bin.contents[0].blob, 'base64').subarray(0, 8).equals(PNG_MAGIC));
      }
      for (const uri of ['test://watched-resource', 'test://example-resource']) {
        const r = await client.readResource({ uri });
        assert.equal(r.contents[0].uri, uri);
        assert.equal(typeof r.contents[0].text, 'string');
      }
      const tpl = await client.readResource({ uri: 'test://template/123/data' });
      assert.equal(tpl.contents[0].uri, 'test://template/123/data');
      assert.ok(tpl.contents[0].text.includes('123'), tpl.contents[0].text);
      const tpl2 = await client.readResource({ uri: 'test://template/abc-9/data' });
      assert.ok(tpl2.contents[0].text.includes('abc-9'));
    });

    test('reading an unknown resource is -32002', { timeout: 20000 }, async () => {
      await expectMcpError(client.readResource({ uri: 'test://nope' }), -32002);
    });

    test('subscribe gets resources/updated for the watched resource; unsubscribe stops them', { timeout: 30000 }, async () => {
      assert.deepEqual(await client.subscribeResource({ uri: 'test://watched-resource' }), {});
      const deadline = Date.now() + 5000;
      while (!state.updates.some((u) => u.uri === 'test://watched-resource') && Date.now() < deadline) await sleep(50);
      assert.ok(state.updates.some((u) => u.uri === 'test://watched-resource'),
        'no notifications/resources/updated within 5 s of subscribing');
      assert.deepEqual(await client.unsubscribeResource({ uri: 'test://watched-resource' }), {});
      await sleep(200);
      const n = state.updates.length;
      await sleep(3500);
      assert.equal(state.updates.length, n, 'updates continued after unsubscribe');
    });

    test('prompts/list and prompts/get for every prompt', { timeout: 20000 }, async () => {
      const { prompts, nextCursor } = await client.listPrompts();
      assert.equal(nextCursor, undefined);
      for (const name of FIXTURE_PROMPTS) {
        const p = prompts.find((x) => x.name === name);
        assert.ok(p, `${name} missing`);
        assert.ok(p.description && p.description.length > 0, `${name} has no description`);
      }
      const withArgs = prompts.find((p) => p.name === 'test_prompt_with_arguments');
      for (const a of ['arg1', 'arg2']) {
        assert.equal(withArgs.arguments.find((x) => x.name === a)?.required, true, `${a} not required`);
      }
      const simple = await client.getPrompt({ name: 'test_simple_prompt' });
      assert.ok(simple.messages.length > 0);
      for (const m of simple.messages) {
        assert.ok(['user', 'assistant'].includes(m.role));
        assert.ok(m.content && m.content.type);
      }
      const args = await client.getPrompt({ name: 'test_prompt_with_arguments', arguments: { arg1: 'alpha-1', arg2: 'beta-2' } });
      const texts = args.messages.filter((m) => m.content.type === 'text').map((m) => m.content.text).join('\n');
      assert.ok(texts.includes('alpha-1') && texts.includes('beta-2'), texts);
      const emb = await client.getPrompt({ name: 'test_prompt_with_embedded_resource', arguments: { resourceUri: 'test://example-resource' } });
      const res = emb.messages.find((m) => m.content.type === 'resource');
      assert.ok(res, JSON.stringify(emb));
      assert.equal(res.content.resource.uri, 'test://example-resource');
      assert.equal(typeof res.content.resource.mimeType, 'string');
      assert.equal(typeof res.content.resource.text, 'string');
      const img = await client.getPrompt({ name: 'test_prompt_with_image' });
      const im = img.messages.find((m) => m.content.type === 'image');
      assert.ok(im, JSON.stringify(img));
      assert.ok(isStrictBase64(im.content.data));
      assert.equal(typeof im.content.mimeType, 'string');
      await expectMcpError(client.getPrompt({ name: 'no_such_prompt' }), -32602);
      await expectMcpError(client.getPrompt({ name: 'test_prompt_with_arguments', arguments: { arg1: 'x' } }), -32602);
    });

    test('completion/complete for a prompt argument and a template variable', { timeout: 20000 }, async () => {
      const c = await client.complete({ ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' }, argument: { name: 'arg1', value: 'test' } });
      assert.ok(Array.isArray(c.completion.values));
      assert.ok(c.completion.values.length <= 100);
      for (const v of c.completion.values) assert.equal(typeof v, 'string');
      const t = await client.complete({ ref: { type: 'ref/resource', uri: 'test://template/{id}/data' }, argument: { name: 'id', value: '1' } });
      assert.ok(Array.isArray(t.completion.values));
      await expectMcpError(client.complete({ ref: { type: 'ref/prompt', name: 'no_such_prompt' }, argument: { name: 'a', value: '' } }), -32602);
    });

    test('the transport reported no errors (stdout only JSON-RPC; SSE streams well-formed)', { timeout: 20000 }, async () => {
      // The SDK reports unparseable stdout lines and transport failures through onerror.
      assert.deepEqual(await client.ping(), {});
      // The SDK's own stdio race (see callWithProgress) is not a server fault; the wire order of
      // progress and responses is asserted there.
      const sdkRace = /^Error: Received a progress notification for an unknown token/;
      const errors = mode === 'stdio' ? state.errors.filter((e) => !sdkRace.test(e)) : state.errors;
      assert.deepEqual(errors, []);
      if (mode === 'stdio') assert.ok(!stderrText.includes('"jsonrpc"'), 'protocol messages on stderr');
    });
  });
}
