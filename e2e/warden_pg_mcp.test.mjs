// Two `warden mcp --db postgresql://...` servers on one KB (docs/warden.md §3.3, decision 0092):
// a client subscribed to `warden://symbols/<stable_id>` on one server (Streamable HTTP) is told
// when a client of the other server (stdio) or the CLI names that function, and reading the
// resource shows the new name with its provenance. Then the database is stopped: tool calls get
// a clear, retryable error without URL, password or SQL, both servers stay up, and once the
// database is back the next calls work and subscribers hear that anything may have changed.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { REPO_ROOT } from './lib/env.mjs';
import { startHttpServer } from './lib/http.mjs';
import { startPgScratch } from './lib/pg.mjs';
import { WARDEN } from './lib/servers.mjs';

const FIXTURES = path.join(REPO_ROOT, 'testdata', 'warden', 'fixtures');
const PG_SCRATCH = path.join(REPO_ROOT, 'scripts', 'pg_scratch');

function warden(args, env = undefined) {
  const r = spawnSync(WARDEN, args, { encoding: 'utf8', timeout: 120000, env });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

// Resolves when `pred()` holds, polling; rejects after `ms`.
async function until(pred, ms, what) {
  const deadline = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

let dir;
let pg;
let env;

before(() => {
  assert.ok(existsSync(WARDEN), `warden binary not found: ${WARDEN}`);
  dir = mkdtempSync(path.join(os.tmpdir(), 'warden-pg-mcp-e2e-'));
  // No user or project config of the developer's: HOME and XDG point into the scratch dir.
  env = { PATH: process.env.PATH, HOME: dir, XDG_CONFIG_HOME: dir };
  pg = startPgScratch();
  pg.createDb('kb');
});
after(() => {
  if (pg) pg.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('two servers on one database: a name set through one is notified and read through the other; a database that goes away and comes back', { timeout: 240000 }, async () => {
  const url = pg.urlFor('kb');
  // The HTTP server connects over TCP with the password in its URL: it must never show.
  const withPassword = pg.tcpUrl.replace('trove@', `trove:${encodeURIComponent(pg.password)}@`)
    .replace('/trove?', '/kb?');
  let r = warden(['ingest', path.join(FIXTURES, 'app-O2.wasm'), '--db', url, '--no-seed'], env);
  assert.equal(r.code, 0, r.stderr);

  // Server 1 on stdio (client A), server 2 on Streamable HTTP (client B).
  const transportA = new StdioClientTransport({ command: WARDEN, args: ['mcp', '--db', url], stderr: 'pipe', env, cwd: dir });
  let stderrA = '';
  transportA.stderr.on('data', (c) => { stderrA += c.toString('utf8'); });
  const a = new Client({ name: 'warden-pg-a', version: '0.0.0' });
  await a.connect(transportA);
  const srv = await startHttpServer(['--db', withPassword, '--log-level', 'info'], { bin: WARDEN, command: ['mcp'], env });
  const b = new Client({ name: 'warden-pg-b', version: '0.0.0' });
  await b.connect(new StreamableHTTPClientTransport(new URL(srv.url)));
  const updatesA = [];
  const updatesB = [];
  a.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => { updatesA.push(n.params.uri); });
  b.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => { updatesB.push(n.params.uri); });
  try {
    assert.equal(b.getServerCapabilities()?.resources?.subscribe, true);
    const resources = (await b.listResources()).resources.map((x) => x.uri);
    assert.ok(resources.includes('warden://symbols'), JSON.stringify(resources));
    const templates = (await b.listResourceTemplates()).resourceTemplates.map((x) => x.uriTemplate);
    assert.ok(templates.includes('warden://symbols/{stable_id}'), JSON.stringify(templates));

    const fns = (await b.callTool({ name: 'list_functions', arguments: { version_id: 1 } })).structuredContent.functions;
    const [target, other] = fns.filter((f) => f.name === null);
    assert.ok(target && other, JSON.stringify(fns.slice(0, 5)));
    const uri = `warden://symbols/${target.stable_id.replaceAll('/', '%2F')}`;
    assert.deepEqual(await b.subscribeResource({ uri }), {});
    assert.deepEqual(await a.subscribeResource({ uri: 'warden://symbols' }), {});
    const unnamed = JSON.parse((await b.readResource({ uri })).contents[0].text);
    assert.equal(unnamed.symbol, null);

    // Client A names it through server 1: B hears it from server 2, A from its own server.
    const proposed = await a.callTool({ name: 'propose_symbol', arguments: { stable_id: target.stable_id, name: 'decode_frame', confidence: 0.7 } });
    assert.equal(proposed.structuredContent.written, true, JSON.stringify(proposed));
    await until(() => updatesB.includes(uri), 30000, `resources/updated ${uri} on server 2`);
    await until(() => updatesA.includes('warden://symbols'), 30000, 'resources/updated warden://symbols on server 1');
    let symbol = JSON.parse((await b.readResource({ uri })).contents[0].text).symbol;
    assert.equal(symbol.name, 'decode_frame');
    assert.equal(symbol.provenance, 'agent');
    assert.equal(symbol.evidence.at(-1).actor, 'agent:mcp');
    const feed = JSON.parse((await a.readResource({ uri: 'warden://symbols' })).contents[0].text);
    assert.equal(feed.listening, true);
    assert.ok(feed.changes.some((c) => c.stable_id === target.stable_id && c.uri === uri), JSON.stringify(feed));
    // Nothing for a function B did not subscribe to.
    await a.callTool({ name: 'propose_symbol', arguments: { stable_id: other.stable_id, name: 'other_fn', confidence: 0.6 } });
    await until(() => updatesA.filter((u) => u === 'warden://symbols').length >= 2, 30000, 'a second warden://symbols update');
    assert.ok(!updatesB.some((u) => u.includes(other.stable_id)), JSON.stringify(updatesB));

    // A human on another machine: the CLI, a third process.
    const seen = updatesB.length;
    r = warden(['--db', url, 'set-name', target.stable_id, 'decode_frame_v2'], env);
    assert.equal(r.code, 0, r.stderr);
    await until(() => updatesB.slice(seen).includes(uri), 30000, 'resources/updated after set-name');
    symbol = JSON.parse((await b.readResource({ uri })).contents[0].text).symbol;
    assert.equal(symbol.name, 'decode_frame_v2');
    assert.equal(symbol.provenance, 'human');
    assert.equal(symbol.locked, true);

    // The database goes away: clear, retryable errors; both servers stay up.
    execFileSync(PG_SCRATCH, ['halt', pg.dir], { stdio: 'ignore', timeout: 120000 });
    for (const client of [a, b]) {
      const down = await client.callTool({ name: 'list_versions', arguments: {} });
      assert.equal(down.isError, true, JSON.stringify(down));
      const text = down.content[0].text;
      assert.match(text, /temporarily unavailable/);
      const error = down._meta?.['trove/error'];
      assert.equal(error?.retryable, true, JSON.stringify(down));
      assert.ok(error?.errorId, JSON.stringify(down));
      for (const secret of ['postgresql://', pg.password, 'SELECT', 'sqlstate', '/tmp/trove-pg']) {
        assert.ok(!JSON.stringify(down).includes(secret), `${secret} in ${JSON.stringify(down)}`);
      }
    }
    const writeDown = await a.callTool({ name: 'propose_symbol', arguments: { stable_id: other.stable_id, name: 'lost_fn' } });
    assert.equal(writeDown.isError, true, JSON.stringify(writeDown));
    assert.equal(srv.exit, null, 'the HTTP server exited');
    assert.equal(transportA.pid !== null && transportA.pid !== undefined, true);

    // Back: the next calls work, and B hears that its symbol may have changed.
    const seenBeforeRestart = updatesB.length;
    execFileSync(PG_SCRATCH, ['restart', pg.dir], { stdio: 'ignore', timeout: 120000 });
    for (const client of [a, b]) {
      const back = await client.callTool({ name: 'list_versions', arguments: {} });
      assert.notEqual(back.isError, true, JSON.stringify(back));
      assert.equal(back.structuredContent.versions.length, 1);
    }
    await until(() => updatesB.slice(seenBeforeRestart).includes(uri), 60000, 'the reconnect notification');
    const written = await a.callTool({ name: 'propose_symbol', arguments: { stable_id: other.stable_id, name: 'after_restart', confidence: 0.9 } });
    assert.equal(written.structuredContent.written, true, JSON.stringify(written));
    const otherUri = `warden://symbols/${other.stable_id.replaceAll('/', '%2F')}`;
    symbol = JSON.parse((await b.readResource({ uri: otherUri })).contents[0].text).symbol;
    assert.equal(symbol.name, 'after_restart');
    // The HTTP server logged the outage and its recovery, never the password.
    await until(() => /symbol notifications: listening[\s\S]*paused[\s\S]*listening/.test(srv.stderr), 30000, 'outage and recovery in the log');
    assert.ok(!srv.stderr.includes(pg.password), 'password in the server log');
    assert.ok(!stderrA.includes(pg.password));
  } finally {
    await a.close();
    await b.close();
    await srv.stop();
  }
});
