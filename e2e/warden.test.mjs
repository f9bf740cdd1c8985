// WARDEN end to end: the `warden` CLI (exit codes, --json objects, exports) and `warden mcp`
// driven by the official TypeScript SDK client over stdio and Streamable HTTP (docs/warden.md
// §2, §3; issues 3 and 4). The module under test is built here, byte by byte.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { BUILD_DIR, INSPECTOR_BIN, REPO_ROOT, node22Env } from './lib/env.mjs';
import { startHttpServer } from './lib/http.mjs';
import { StdioServer } from './lib/stdio.mjs';

const WARDEN = path.join(BUILD_DIR, 'src', 'warden', 'cli', 'warden');
const KB_FIXTURE = path.join(BUILD_DIR, 'e2e', 'warden_kb_fixture');

// --- A tiny wasm writer ---
const uleb = (n) => { const out = []; do { let b = n & 0x7f; n >>>= 7; if (n) b |= 0x80; out.push(b); } while (n); return out; };
const sleb = (n) => { const out = []; for (;;) { const b = n & 0x7f; n >>= 7; if ((n === 0 && !(b & 0x40)) || (n === -1 && (b & 0x40))) { out.push(b); return out; } out.push(b | 0x80); } };
const name = (s) => { const b = [...Buffer.from(s, 'utf8')]; return [...uleb(b.length), ...b]; };
const vec = (items) => [...uleb(items.length), ...items.flat()];
const section = (id, body) => [id, ...uleb(body.length), ...body];
const sized = (b) => [...uleb(b.length), ...b];

// func 0: import env.log () -> ()
// func 1: (i32) -> i32, exported "sqlite3_open": p0 + 1
// func 2: () -> (), named "log_wrapper" in the name section: calls env.log
// func 3: (i32) -> i32: p0 * 3 in v1, p0 - 5 in v2 (constants alone would not change its
//         stable_id: they are masked)
// func 4: () -> (): references "hello world" at 1024
function buildModule(v2 = false) {
  const types = vec([[0x60, 0x00, 0x00], [0x60, 0x01, 0x7f, 0x01, 0x7f]]);
  const imports = vec([[...name('env'), ...name('log'), 0x00, 0x00]]);
  const funcs = vec([[1], [0], [1], [0]]);
  const memory = vec([[0x00, 0x01]]);
  const exports = vec([[...name('sqlite3_open'), 0x00, 1]]);
  const bodies = [
    [0x00, 0x20, 0x00, 0x41, 0x01, 0x6a, 0x0b],
    [0x00, 0x10, 0x00, 0x0b],
    v2 ? [0x00, 0x20, 0x00, 0x41, ...sleb(5), 0x6b, 0x0b] : [0x00, 0x20, 0x00, 0x41, ...sleb(3), 0x6c, 0x0b],
    [0x00, 0x41, ...sleb(1024), 0x1a, 0x0b],
  ];
  const code = vec(bodies.map(sized));
  const data = vec([[0x00, 0x41, ...sleb(1024), 0x0b, ...sized([...Buffer.from('hello world\0')])]]);
  const names = [...name('name'), 0x01, ...sized(vec([[...uleb(2), ...name('log_wrapper')]]))];
  return Buffer.from([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, types), ...section(2, imports), ...section(3, funcs), ...section(5, memory),
    ...section(7, exports), ...section(10, code), ...section(11, data), ...section(0, names)]);
}

function warden(args, { cwd } = {}) {
  const r = spawnSync(WARDEN, args, { cwd, encoding: 'utf8', timeout: 60000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
function wardenJson(args, opts) {
  const r = warden([...args, '--json'], opts);
  assert.equal(r.code, 0, `warden ${args.join(' ')}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

let dir;
let db;
let v1;
let v2;

before(() => {
  assert.ok(existsSync(WARDEN), `warden binary not found: ${WARDEN}`);
  dir = mkdtempSync(path.join(os.tmpdir(), 'warden-e2e-'));
  db = path.join(dir, 'kb.db');
  v1 = path.join(dir, 'app-v1.wasm');
  v2 = path.join(dir, 'app-v2.wasm');
  writeFileSync(v1, buildModule(false));
  writeFileSync(v2, buildModule(true));
});
after(() => { if (dir) rmSync(dir, { recursive: true, force: true }); });

describe('warden CLI', () => {
  test('a missing KB is exit 3 with the discovery message, and no file is created', () => {
    const empty = mkdtempSync(path.join(os.tmpdir(), 'warden-none-'));
    try {
      for (const args of [['versions'], ['coverage'], ['funcs'], ['mcp']]) {
        const r = warden(args, { cwd: empty });
        assert.equal(r.code, 3, `${args}: ${r.stderr}`);
        assert.match(r.stderr, /no WARDEN database found \(run 'warden init' or pass --db\)/);
      }
      const r = warden(['versions', '--db', path.join(empty, 'nope.db')]);
      assert.equal(r.code, 3);
      assert.ok(!existsSync(path.join(empty, 'nope.db')), 'a read command created a database');
      assert.ok(!existsSync(path.join(empty, 'warden.db')));
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  test('init, ingest with seeds, versions, coverage and funcs', () => {
    const proj = mkdtempSync(path.join(os.tmpdir(), 'warden-proj-'));
    try {
      let r = warden(['init', '--project', 'demo'], { cwd: proj });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, "initialized WARDEN project 'demo' in .warden/\n");
      assert.equal(warden(['init'], { cwd: proj }).stdout, 'already initialized\n');
      r = warden(['ingest', v1], { cwd: proj });
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^ingested v1 \(id 1\): 5 functions \(1 imported, 4 defined\), \d+ bytes\n/);
      assert.match(r.stdout, /seeded names: 1 from the name section, 0 from the glue, 2 from exports and imports/);
      // The same bytes again write nothing.
      r = warden(['ingest', v1], { cwd: proj });
      assert.equal(r.code, 0);
      assert.match(r.stdout, /already ingested as v1/);
      const versions = wardenJson(['versions'], { cwd: proj });
      assert.deepEqual(versions.map((v) => Object.keys(v)), [['id', 'label', 'emscripten_version', 'functions', 'shared_memory',
        'producers', 'target_features']]);
      assert.equal(versions[0].functions, 5);
      assert.equal(versions[0].emscripten_version, null);
      const cov = wardenJson(['coverage'], { cwd: proj });
      assert.deepEqual(cov, { defined: 4, named: 2, coverage_pct: 50, oracle_named: 0, human_named: 0, agent_named: 0,
        placeholder_named: 0, real_named: 2, real_coverage_pct: 50, producers: {}, target_features: [] });
      const funcs = wardenJson(['funcs'], { cwd: proj });
      assert.deepEqual(funcs.map((f) => f.index), [1, 2, 3, 4]);
      assert.equal(funcs[0].name, 'sqlite3_open');
      assert.equal(funcs[0].provenance, 'export');
      assert.equal(funcs[1].name, 'log_wrapper');
      assert.equal(funcs[2].name, null);
      assert.equal(funcs[2].confidence, null);
      assert.match(funcs[2].stable_id, /^w1:[0-9a-f]{32}$/);
      const withImports = wardenJson(['funcs', '--imports'], { cwd: proj });
      assert.equal(withImports[0].stable_id, 'import:env.log');
      assert.equal(wardenJson(['funcs', '--unnamed'], { cwd: proj }).length, 2);
    } finally {
      rmSync(proj, { recursive: true, force: true });
    }
  });

  test('exit codes: usage 2, malformed 4 (KB unchanged), unknown 6', () => {
    assert.equal(warden(['ingest', v1, '--db', db, '--label', 'v1']).code, 0);
    const before = readFileSync(db).length;
    assert.equal(warden(['frobnicate']).code, 2);
    assert.equal(warden(['funcs', '--db', db, '--below', '7']).code, 2);
    assert.equal(warden(['ingest', v2, '--db', db, '--label', 'v1']).code, 2, 'duplicate label');
    const bad = path.join(dir, 'bad.wasm');
    writeFileSync(bad, buildModule(false).subarray(0, 60));
    const r = warden(['ingest', bad, '--db', db]);
    assert.equal(r.code, 4, r.stderr);
    assert.match(r.stderr, /^warden: error: malformed wasm at offset 0x[0-9a-f]+ \(\d+\)[,:] /);
    assert.equal(wardenJson(['versions', '--db', db]).length, 1, 'a failed ingest wrote a version');
    const fresh = path.join(dir, 'fresh.db');
    assert.equal(warden(['ingest', path.join(dir, 'missing.wasm'), '--db', fresh]).code, 2);
    assert.ok(!existsSync(fresh), 'a failed ingest created a database');
    assert.equal(warden(['coverage', 'v9', '--db', db]).code, 6);
    assert.equal(warden(['show', 'func[99]', '--db', db]).code, 6);
    assert.equal(warden(['show', 'no_such_name', '--db', db]).code, 6);
    assert.ok(readFileSync(db).length >= before);
  });

  test('unknown commands name themselves and the commands there are (exit 2)', () => {
    const commands = 'init, ingest, versions, coverage, funcs, show, set-name, verify, export, report, diff, demo, oracle, kb, agent, mcp, config, audit';
    let r = warden(['frobnicate']);
    assert.equal(r.code, 2);
    assert.equal(r.stderr, `warden: error: unknown command 'frobnicate'; the commands are: ${commands}\n`);
    r = warden([]);
    assert.equal(r.code, 2);
    assert.equal(r.stderr, `warden: error: a command is required; the commands are: ${commands}\n`);
    r = warden(['config', 'frob']);
    assert.equal(r.code, 2);
    assert.equal(r.stderr, "warden: error: unknown command 'frob'; the config commands are: set, get\n");
  });

  test('exit codes of issue 17: a directory 2, an empty name 2, a failed first ingest leaves no file', () => {
    const sub = mkdtempSync(path.join(os.tmpdir(), 'warden-leftovers-'));
    try {
      const fresh = path.join(sub, 'new.db');
      let r = warden(['ingest', sub, '--db', fresh]);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /is a directory/);
      const bad = path.join(dir, 'bad-body.wasm');
      writeFileSync(bad, buildModule(false).subarray(0, 60));
      r = warden(['ingest', bad, '--db', fresh]);
      assert.equal(r.code, 4, r.stderr);
      assert.deepEqual(readdirSync(sub), [], 'a failed first ingest left files');
      assert.equal(warden(['ingest', v1, '--db', fresh]).code, 0);
      r = warden(['set-name', '2', '', '--db', fresh]);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /name is empty/);
    } finally {
      rmSync(sub, { recursive: true, force: true });
    }
  });

  test('set-name is a locked human write; show and exports see it, byte for byte', () => {
    assert.equal(warden(['ingest', v2, '--db', db, '--label', 'v2']).code, 0);
    let r = warden(['set-name', 'func[3]', 'scale_value', '--db', db, '--version', 'v1', '--summary', 'multiplies']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^func\[3\] w1:[0-9a-f]{32} -> scale_value \[human, locked\]\n$/);
    const show = wardenJson(['show', 'scale_value', '--db', db, '--version', 'v1']);
    assert.equal(show.symbol.name, 'scale_value');
    assert.equal(show.symbol.locked, true);
    assert.equal(show.symbol.provenance, 'human');
    assert.equal(show.symbol.evidence.at(-1).actor, 'human:cli');
    const kb1 = warden(['export', 'v1', '--format', 'kb-text', '--db', db]);
    assert.equal(kb1.code, 0, kb1.stderr);
    assert.match(kb1.stdout, /^# warden kb-text 1 v1\n/);
    assert.match(kb1.stdout, /\n3\tw1:[0-9a-f]{32}\tL\thuman\t1\.000\tscale_value\n/);
    for (const format of ['headers', 'pseudo', 'kb-text', 'ghidra']) {
      const a = warden(['export', 'v1', '--format', format, '--db', db]);
      const b = warden(['export', 'v1', '--format', format, '--db', db]);
      assert.equal(a.code, 0, `${format}: ${a.stderr}`);
      assert.equal(a.stdout, b.stdout, `${format} is not deterministic`);
      assert.ok(a.stdout.endsWith('\n'));
    }
    const pseudo = warden(['export', 'v1', '--format', 'pseudo', '--db', db]).stdout;
    assert.match(pseudo, /int32_t scale_value\(int32_t p0\) \{\n  return \(p0 \* 3\);\n\}/);
    assert.match(pseudo, /int32_t sqlite3_open\(int32_t p0\) \{\n  return \(p0 \+ 1\);\n\}/);
    const headers = warden(['export', 'v1', '--format', 'headers', '--db', db]).stdout;
    assert.match(headers, /#ifndef WARDEN_V1_H/);
    assert.match(headers, /int32_t scale_value\(int32_t p0\);/);
    assert.equal(warden(['export', 'v1', '--format', 'json', '--db', db]).code, 2);
    const lift = warden(['show', 'scale_value', '--lift', '--db', db, '--version', 'v1']);
    assert.equal(lift.code, 0, lift.stderr);
    assert.match(lift.stdout, /  pseudo-C\n  return \(p0 \* 3\);\n/);
    assert.equal(wardenJson(['show', 'func[1]', '--lift', '--db', db, '--version', 'v1']).lifted, '  return (p0 + 1);\n');
  });

  test('export --json: one object, the export in content (null with --out)', () => {
    const kbText = warden(['export', 'v1', '--format', 'kb-text', '--db', db]).stdout;
    const j = wardenJson(['export', 'v1', '--format', 'kb-text', '--db', db]);
    assert.deepEqual(Object.keys(j), ['version_id', 'label', 'format', 'out', 'bytes', 'sha256', 'content']);
    assert.equal(j.version_id, 1);
    assert.equal(j.label, 'v1');
    assert.equal(j.format, 'kb-text');
    assert.equal(j.out, null);
    assert.equal(j.content, kbText);
    assert.equal(j.bytes, Buffer.byteLength(kbText));
    assert.equal(j.sha256, createHash('sha256').update(kbText).digest('hex'));
    const outFile = path.join(dir, 'v1.h');
    const o = wardenJson(['export', 'v1', '--format', 'headers', '--db', db, '--out', outFile]);
    assert.equal(o.content, null);
    assert.equal(o.out, outFile);
    assert.equal(o.bytes, readFileSync(outFile).length);
    assert.equal(o.sha256, createHash('sha256').update(readFileSync(outFile)).digest('hex'));
  });

  test('a relative module path lifts from any directory; exports name no path', () => {
    const proj = mkdtempSync(path.join(os.tmpdir(), 'warden-rel-'));
    const elsewhere = mkdtempSync(path.join(os.tmpdir(), 'warden-elsewhere-'));
    try {
      writeFileSync(path.join(proj, 'mod.wasm'), buildModule(false));
      assert.equal(warden(['ingest', 'mod.wasm', '--db', 'kb.db'], { cwd: proj }).code, 0);
      const rdb = path.join(proj, 'kb.db');
      const lift = warden(['show', 'func[3]', '--lift', '--db', rdb], { cwd: elsewhere });
      assert.equal(lift.code, 0, lift.stderr);
      assert.match(lift.stdout, /  pseudo-C\n  return \(p0 \* 3\);\n/);
      const pseudo = warden(['export', 'v1', '--format', 'pseudo', '--db', rdb], { cwd: elsewhere });
      assert.equal(pseudo.code, 0, pseudo.stderr);
      assert.match(pseudo.stdout, /return \(p0 \* 3\);/);
      // Without the module, each function gets a note, and no path reaches the export.
      rmSync(path.join(proj, 'mod.wasm'));
      const missing = warden(['export', 'v1', '--format', 'pseudo', '--db', rdb], { cwd: elsewhere });
      assert.equal(missing.code, 0, missing.stderr);
      assert.match(missing.stdout, /not readable/);
      assert.ok(!missing.stdout.includes(proj), missing.stdout);
      assert.ok(!missing.stdout.includes('mod.wasm'), missing.stdout);
    } finally {
      rmSync(proj, { recursive: true, force: true });
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });

  test('agent: an offline pass names what is left, never a human name; a missing key is exit 5', () => {
    const adb = path.join(dir, 'agent.db');
    assert.equal(warden(['ingest', v1, '--db', adb]).code, 0);
    assert.equal(warden(['set-name', 'func[3]', 'keep_me', '--db', adb]).code, 0);
    const dry = wardenJson(['agent', '--backend', 'offline', '--dry-run', '--db', adb]);
    assert.equal(dry.backend, 'offline');
    assert.equal(wardenJson(['coverage', '--db', adb]).agent_named, 0, 'a dry run wrote');
    const run = wardenJson(['agent', '--backend', 'offline', '--db', adb]);
    assert.deepEqual(Object.keys(run), ['backend', 'considered', 'proposed', 'written', 'rejected_by_verifier',
      'rejected_by_economy', 'skipped_existing', 'details']);
    assert.equal(run.proposed, run.written + run.rejected_by_verifier + run.rejected_by_economy);
    assert.ok(run.written >= 1, JSON.stringify(run));
    const cov = wardenJson(['coverage', '--db', adb]);
    assert.equal(cov.coverage_pct, 100);
    assert.equal(cov.human_named, 1);
    const funcs = wardenJson(['funcs', '--db', adb]);
    assert.equal(funcs.find((f) => f.index === 3).name, 'keep_me');
    // The same pass again proposes nothing new: all are named (offline stays below 0.5 but
    // the economy keeps equal-confidence names).
    const again = wardenJson(['agent', '--backend', 'offline', '--db', adb]);
    assert.equal(again.written, 0);
    const r = spawnSync(WARDEN, ['agent', '--backend', 'openai', '--db', adb], {
      encoding: 'utf8', env: { ...process.env, OPENAI_API_KEY: '', HOME: dir, XDG_CONFIG_HOME: dir } });
    assert.equal(r.status, 5, r.stderr);
    assert.match(r.stderr, /OPENAI_API_KEY/);
    assert.equal(warden(['agent', '--backend', 'gpt9', '--db', adb]).code, 2);
  });

  test('config set/get: the command the unavailable-backend message names', () => {
    const home = mkdtempSync(path.join(os.tmpdir(), 'warden-config-'));
    const proj = mkdtempSync(path.join(os.tmpdir(), 'warden-config-proj-'));
    const env = { ...process.env, HOME: home, XDG_CONFIG_HOME: path.join(home, 'xdg'), OPENAI_API_KEY: '' };
    const run = (args, cwd = proj) => {
      const r = spawnSync(WARDEN, args, { cwd, encoding: 'utf8', env });
      return { code: r.status, stdout: r.stdout, stderr: r.stderr };
    };
    try {
      assert.equal(run(['init']).code, 0);
      assert.equal(warden(['ingest', v1, '--db', path.join(proj, '.warden', 'warden.db')]).code, 0);
      // The message names `warden config set openai.api_key ...`; that command exists.
      let r = run(['agent', '--backend', 'openai']);
      assert.equal(r.code, 5, r.stderr);
      assert.match(r.stderr, /warden config set openai\.api_key/);
      r = run(['config', 'set', 'openai.api_key', 'sk-secret-e2e']);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, '');
      const file = path.join(home, 'xdg', 'warden', 'config.json');
      assert.deepEqual(JSON.parse(readFileSync(file, 'utf8')), { 'openai.api_key': 'sk-secret-e2e' });
      assert.equal(statSync(file).mode & 0o777, 0o600);
      r = run(['config', 'get', 'openai.api_key']);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, '<set>\n', 'a secret was printed');
      assert.equal(run(['config', 'set', 'openai.model', 'gpt-e2e']).code, 0);
      assert.equal(run(['config', 'get', 'openai.model']).stdout, 'gpt-e2e\n');
      // The project file, beside the KB, overrides the global one for the agent backends.
      assert.equal(run(['config', 'set', 'openai.model', 'gpt-project', '--project']).code, 0);
      const pfile = path.join(proj, '.warden', 'config.json');
      assert.deepEqual(JSON.parse(readFileSync(pfile, 'utf8')), { 'openai.model': 'gpt-project' });
      assert.equal(statSync(pfile).mode & 0o777, 0o600);
      assert.equal(run(['config', 'get', 'openai.model', '--project']).stdout, 'gpt-project\n');
      // Unknown key: exit 2; unset: exit 6; a bad backend name: exit 2; --project outside a project: exit 3.
      r = run(['config', 'set', 'openai.colour', 'x']);
      assert.equal(r.code, 2);
      assert.match(r.stderr, /unknown config key 'openai\.colour'/);
      assert.equal(run(['config', 'get', 'anthropic.model']).code, 6);
      assert.equal(run(['config', 'set', 'agent.backend', 'gpt9']).code, 2);
      assert.equal(run(['config', 'set', 'agent.backend', 'offline', '--project'], home).code, 3);
      assert.ok(!readFileSync(file, 'utf8').includes('gpt9'));
    } finally {
      rmSync(home, { recursive: true, force: true });
      rmSync(proj, { recursive: true, force: true });
    }
  });

  test('agent, mcp and config run in warden-net beside warden; without it they are exit 5', () => {
    // warden itself links neither the agent backends nor the MCP server (decision 0043).
    const alone = mkdtempSync(path.join(os.tmpdir(), 'warden-alone-'));
    try {
      const lone = path.join(alone, 'warden');
      copyFileSync(WARDEN, lone);
      chmodSync(lone, 0o755);
      for (const args of [['config', 'get', 'agent.backend'], ['mcp', '--db', db], ['agent', '--db', db], ['audit', 'stats', db]]) {
        const r = spawnSync(lone, args, { encoding: 'utf8', timeout: 60000 });
        assert.equal(r.status, 5, `${args}: ${r.stderr}`);
        assert.equal(r.stdout, '');
        assert.match(r.stderr, /^warden: error: cannot run .*\/warden-net: No such file or directory \(the agent, mcp, config and audit commands run in warden-net, which is installed beside warden\)\n$/);
      }
      // The commands that do not need it work from the lone copy.
      const r = spawnSync(lone, ['verify', v1], { encoding: 'utf8', timeout: 60000 });
      assert.equal(r.status, 0, r.stderr);
      // Beside the real one, the same config command reaches warden-net (exit 6: key not set).
      const home = mkdtempSync(path.join(os.tmpdir(), 'warden-home-'));
      try {
        const env = { ...process.env, HOME: home, XDG_CONFIG_HOME: '' };
        const got = spawnSync(WARDEN, ['config', 'get', 'agent.backend'], { encoding: 'utf8', env, timeout: 60000 });
        assert.equal(got.status, 6, got.stderr);
        assert.match(got.stderr, /agent\.backend is not set in /);
      } finally {
        rmSync(home, { recursive: true, force: true });
      }
    } finally {
      rmSync(alone, { recursive: true, force: true });
    }
  });

  test('progress: a bar on a terminal (under a pty), nothing when piped', (t) => {
    if (spawnSync('script', ['--version']).status !== 0) { t.skip('script (util-linux) is absent'); return; }
    const pdb = path.join(dir, 'progress-cli.db');
    // script -qec runs the command on a pseudo-terminal and copies what it draws.
    const onPty = (args) => {
      const cmd = [WARDEN, ...args].map((a) => `'${a}'`).join(' ');
      const r = spawnSync('script', ['-qec', cmd, '/dev/null'], { encoding: 'utf8', timeout: 60000 });
      return { code: r.status, out: r.stdout };
    };
    const bars = (out) => out.split('\r\x1b[K').filter((s) => s.startsWith('['));
    let r = onPty(['ingest', v1, '--db', pdb]);
    assert.equal(r.code, 0, r.out);
    assert.ok(bars(r.out).some((b) => /^\[#{8}\.{16}\]  33% fingerprint/.test(b)), JSON.stringify(r.out));
    assert.match(r.out, /\r\x1b\[Kingested v1 \(id 1\)/, 'the bar is erased before the result');
    r = onPty(['verify', v1]);
    assert.equal(r.code, 0, r.out);
    assert.ok(bars(r.out).some((b) => b.includes('fingerprint (4 threads)')), JSON.stringify(r.out));
    assert.ok(bars(r.out).some((b) => /^\[#{24}\] 100% compare 4\/4/.test(b)), JSON.stringify(r.out));
    r = onPty(['export', 'v1', '--format', 'pseudo', '--db', pdb]);
    assert.equal(r.code, 0, r.out);
    const exportBars = bars(r.out).filter((b) => b.includes(' export '));
    assert.ok(exportBars.length >= 2, JSON.stringify(r.out));  // per function
    assert.match(exportBars.at(-1), /100% export 4\/4/);
    assert.ok(bars(r.out).some((b) => b.includes('lift')), JSON.stringify(r.out));
    // Piped: no bar and no escape sequence anywhere.
    for (const args of [['verify', v1], ['export', 'v1', '--format', 'pseudo', '--db', pdb]]) {
      const piped = warden(args);
      assert.equal(piped.code, 0);
      assert.equal(piped.stderr, '');
      assert.ok(!piped.stdout.includes('\x1b'));
    }
  });

  test('verify needs no KB and reports determinism', () => {
    const r = warden(['verify', v1]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^4\/4 functions fingerprint deterministically\n/);
    assert.match(r.stdout, /differential equivalence ready: (True|False) tooling=\{'wasm2c': /);
  });
});

// --- MCP ---

function textOf(result) {
  const t = result.content.find((c) => c.type === 'text');
  assert.ok(t, JSON.stringify(result));
  return t.text;
}

// The JSON type of a value as the seed's tables name it: int, float, string, bool, array,
// object or null.
const typeOf = (v) => v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v === 'number' ? (Number.isInteger(v) ? 'int' : 'float')
  : typeof v === 'boolean' ? 'bool' : typeof v;
// Asserts the exact keys of `obj`, in order, and that each value has one of the allowed types
// ("float" also admits a value that happens to be integral).
function assertShape(obj, shape, what) {
  assert.deepEqual(Object.keys(obj), Object.keys(shape), `${what}: keys`);
  for (const [key, allowed] of Object.entries(shape)) {
    const t = typeOf(obj[key]);
    const ok = allowed.split('|').some((a) => a === t || (a === 'float' && t === 'int'));
    assert.ok(ok, `${what}.${key}: ${t} (${JSON.stringify(obj[key])}) is not ${allowed}`);
  }
}
const VERSION_SHAPE = { id: 'int', label: 'string', emscripten_version: 'string|null', functions: 'int', shared_memory: 'bool',
  producers: 'object|null', target_features: 'array|null' };
const FUNCTION_SHAPE = { index: 'int', stable_id: 'string', type: 'string|null', name: 'string|null', provenance: 'string|null', confidence: 'float|null' };
const FACTS_SHAPE = { func_index: 'int', stable_id: 'string', type_signature: 'string', call_targets: 'array', referenced_strings: 'array',
  raw_name: 'string|null', instruction_mnemonics: 'array', is_exported: 'bool', oracle: 'object|null' };
const SYMBOL_SHAPE = { stable_id: 'string', name: 'string|null', summary: 'string|null', type_signature: 'string|null', provenance: 'string',
  confidence: 'float', locked: 'bool', evidence: 'array' };
const EVIDENCE_SHAPE = { at: 'string', actor: 'string', provenance: 'string', name: 'string|null', confidence: 'float|null', accepted: 'bool',
  reason: 'string', details: 'object' };
const SUMMARY_SHAPE = { backend: 'string', considered: 'int', proposed: 'int', written: 'int', rejected_by_verifier: 'int',
  rejected_by_economy: 'int', skipped_existing: 'int', details: 'array' };
const DETAIL_SHAPE = { func_index: 'int', stable_id: 'string', outcome: 'string', name: 'string|null', confidence: 'float|null', reason: 'string' };

async function exerciseTools(client) {
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name).sort();
  for (const n of ['agent_backends', 'coverage', 'get_function_facts', 'get_symbol', 'list_functions', 'list_versions', 'propose_symbol', 'run_agent_pass']) {
    assert.ok(names.includes(n), `missing tool ${n}: ${names}`);
  }
  const listed = (await client.callTool({ name: 'list_versions', arguments: {} })).structuredContent;
  assert.deepEqual(Object.keys(listed), ['versions']);
  const versions = listed.versions;
  assert.equal(versions.length, 2);
  versions.forEach((v, i) => assertShape(v, VERSION_SHAPE, `versions[${i}]`));
  const id = versions.find((v) => v.label === 'v1').id;
  const cov = await client.callTool({ name: 'coverage', arguments: { version_id: id } });
  assert.deepEqual(Object.keys(cov.structuredContent), ['defined', 'named', 'coverage_pct', 'oracle_named', 'human_named', 'agent_named',
    'placeholder_named', 'real_named', 'real_coverage_pct', 'producers', 'target_features']);
  assert.deepEqual(JSON.parse(textOf(cov)), cov.structuredContent);
  // The toolchain sections as `warden versions --json` and `coverage --json` show them.
  assert.deepEqual([cov.structuredContent.producers, cov.structuredContent.target_features], [{}, []]);
  assert.deepEqual(versions.map((v) => [v.producers, v.target_features]), [[{}, []], [{}, []]]);
  const all = (await client.callTool({ name: 'list_functions', arguments: { version_id: id } })).structuredContent;
  assert.deepEqual(Object.keys(all), ['functions', 'next_cursor']);
  assert.equal(all.functions.length, 4);
  assert.equal(all.next_cursor, null);
  all.functions.forEach((f, i) => assertShape(f, FUNCTION_SHAPE, `functions[${i}]`));
  assert.equal(all.functions.find((f) => f.index === 1).type, '(i32) -> i32');
  // Pages of 3 return every row once.
  const seen = [];
  let cursor;
  do {
    const page = (await client.callTool({ name: 'list_functions', arguments: { version_id: id, include_imports: true, limit: 3, ...(cursor ? { cursor } : {}) } })).structuredContent;
    seen.push(...page.functions.map((f) => f.index));
    cursor = page.next_cursor;
  } while (cursor);
  assert.deepEqual(seen, [0, 1, 2, 3, 4]);
  const factsOut = (await client.callTool({ name: 'get_function_facts', arguments: { version_id: id, func_index: 4 } })).structuredContent;
  assert.deepEqual(Object.keys(factsOut), ['facts']);
  const facts = factsOut.facts;
  assertShape(facts, FACTS_SHAPE, 'facts');
  assert.equal(facts.func_index, 4);
  assert.equal(facts.stable_id, all.functions.find((f) => f.index === 4).stable_id);
  assert.equal(facts.is_exported, false);
  assert.deepEqual(facts.referenced_strings, ['hello world']);
  const wrapper = (await client.callTool({ name: 'get_function_facts', arguments: { version_id: id, func_index: 2 } })).structuredContent.facts;
  assertShape(wrapper, FACTS_SHAPE, 'facts of func 2');
  assert.deepEqual(wrapper.call_targets, ['env.log']);
  assert.equal(wrapper.raw_name, 'log_wrapper');
  assert.equal((await client.callTool({ name: 'get_function_facts', arguments: { version_id: id, func_index: 1 } })).structuredContent.facts.is_exported, true);
  assert.equal((await client.callTool({ name: 'get_function_facts', arguments: { version_id: id, func_index: 99 } })).structuredContent.facts, null);
  assert.deepEqual(facts.instruction_mnemonics, ['i32.const', 'drop']);
  assert.equal((await client.callTool({ name: 'get_function_facts', arguments: { version_id: id, func_index: 0 } })).structuredContent.facts, null);
  const scaled = all.functions.find((f) => f.index === 3);

  // The seed's guarantee: an MCP proposal cannot clobber the human name, whatever its confidence.
  const clobber = await client.callTool({ name: 'propose_symbol', arguments: { stable_id: scaled.stable_id, name: 'agent_guess', confidence: 1 } });
  assert.equal(clobber.isError, undefined);
  assert.equal(clobber.structuredContent.written, false);
  assert.match(clobber.structuredContent.reason, /^rejected: .*human/);
  const symOut = (await client.callTool({ name: 'get_symbol', arguments: { stable_id: scaled.stable_id } })).structuredContent;
  assert.deepEqual(Object.keys(symOut), ['symbol']);
  const sym = symOut.symbol;
  assertShape(sym, SYMBOL_SHAPE, 'symbol');
  sym.evidence.forEach((e, i) => assertShape(e, EVIDENCE_SHAPE, `evidence[${i}]`));
  assert.equal(sym.stable_id, scaled.stable_id);
  assert.equal(sym.name, 'scale_value');
  assert.equal(sym.summary, 'multiplies');
  assert.equal(sym.type_signature, '(i32) -> i32');
  const last = sym.evidence.at(-1);
  assert.equal(last.actor, 'agent:mcp');
  assert.equal(last.provenance, 'agent');
  assert.equal(last.accepted, false);
  // An unnamed slot accepts.
  const unnamed = all.functions.find((f) => f.index === 4);
  const ok = await client.callTool({ name: 'propose_symbol', arguments: { stable_id: unnamed.stable_id, name: 'greet', summary: 'references "hello world"', confidence: 0.4 } });
  assert.equal(ok.structuredContent.written, true, JSON.stringify(ok));
  assert.equal((await client.callTool({ name: 'get_symbol', arguments: { stable_id: 'import:env.nothing' } })).structuredContent.symbol, null);

  // Bad inputs are isError results with a clear message.
  const bad = async (name, args, re) => {
    const r = await client.callTool({ name, arguments: args });
    assert.equal(r.isError, true, `${name} ${JSON.stringify(args)}: ${JSON.stringify(r)}`);
    assert.match(textOf(r), re);
  };
  await bad('coverage', { version_id: 999 }, /unknown version_id 999/);
  await bad('list_functions', { version_id: 999 }, /unknown version_id 999/);
  await bad('get_function_facts', { version_id: 999, func_index: 1 }, /unknown version_id 999/);
  await bad('get_symbol', { stable_id: 'not-an-id' }, /arguments\.stable_id/);
  await bad('propose_symbol', { stable_id: unnamed.stable_id, name: 'x2', confidence: 1.5 }, /arguments\.confidence: must be at most 1/);
  await bad('propose_symbol', { stable_id: unnamed.stable_id, name: 'x2', provenance: 'human' }, /arguments\.provenance: unexpected property/);
  await bad('propose_symbol', { stable_id: unnamed.stable_id, name: 'x2', actor: 'human:cli' }, /arguments\.actor: unexpected property/);
  await bad('propose_symbol', { stable_id: unnamed.stable_id, name: 'not valid!' }, /not an identifier/);
  await bad('propose_symbol', { stable_id: `w1:${'0'.repeat(32)}`, name: 'ghost' }, /unknown stable_id/);

  // The agent tools.
  const backends = (await client.callTool({ name: 'agent_backends', arguments: {} })).structuredContent.backends;
  assert.deepEqual(backends.map((b) => b.name), ['offline', 'openai', 'anthropic']);
  assert.deepEqual(Object.keys(backends[1]), ['name', 'backend', 'aliases', 'available', 'requires', 'default_model']);
  assert.equal(backends[0].available, true);
  assert.equal(backends[1].available, false);
  assert.equal(backends[1].default_model, 'gpt-5.3-codex');
  assert.deepEqual(backends[1].aliases, ['codex', 'oai']);
  await bad('run_agent_pass', { version_id: id, backend: 'openai' }, /OPENAI_API_KEY/);
  await bad('run_agent_pass', { version_id: 999, backend: 'offline' }, /unknown version_id 999/);
  // Progress is checked on the wire (a raw stdio client below): the SDK drops notifications
  // that arrive in the same chunk as the response.
  const pass = await client.callTool({ name: 'run_agent_pass', arguments: { version_id: id, backend: 'offline' } });
  assert.equal(pass.isError, undefined, JSON.stringify(pass));
  const summary = pass.structuredContent;
  assertShape(summary, SUMMARY_SHAPE, 'summary');
  assert.ok(summary.details.length > 0, JSON.stringify(summary));
  summary.details.forEach((d, i) => assertShape(d, DETAIL_SHAPE, `details[${i}]`));
  for (const d of summary.details) assert.ok(['written', 'verifier_reject', 'economy_reject', 'error'].includes(d.outcome), d.outcome);
  assert.equal(summary.backend, 'offline');
  assert.equal(summary.proposed, summary.written + summary.rejected_by_verifier + summary.rejected_by_economy);
  const after = (await client.callTool({ name: 'coverage', arguments: { version_id: id } })).structuredContent;
  assert.equal(after.coverage_pct, 100);
  const human = (await client.callTool({ name: 'get_symbol', arguments: { stable_id: scaled.stable_id } })).structuredContent.symbol;
  assert.equal(human.name, 'scale_value');
}

describe('warden mcp', () => {
  let dbHttp;
  before(() => {
    // The same starting state for both transports: every tool is exercised on each.
    dbHttp = path.join(dir, 'kb-http.db');
    writeFileSync(dbHttp, readFileSync(db));
  });

  test('stdio: every tool through the official SDK client', { timeout: 60000 }, async () => {
    const client = new Client({ name: 'warden-e2e', version: '0.0.0' });
    const transport = new StdioClientTransport({ command: WARDEN, args: ['mcp', '--db', db], stderr: 'pipe',
      env: { PATH: process.env.PATH, HOME: dir, XDG_CONFIG_HOME: dir } });
    await client.connect(transport);
    try {
      assert.equal(client.getServerVersion().name, 'warden');
      await exerciseTools(client);
    } finally {
      await client.close();
    }
  });

  test('Streamable HTTP: every tool; concurrent proposals are each recorded once', { timeout: 60000 }, async () => {
    const srv = await startHttpServer(['--db', dbHttp], { bin: WARDEN, command: ['mcp'],
      env: { PATH: process.env.PATH, HOME: dir, XDG_CONFIG_HOME: dir } });
    const client = new Client({ name: 'warden-e2e-http', version: '0.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(srv.url)));
    try {
      await exerciseTools(client);
      const versions = (await client.callTool({ name: 'list_versions', arguments: {} })).structuredContent.versions;
      const id = versions.find((v) => v.label === 'v2').id;
      const fns = (await client.callTool({ name: 'list_functions', arguments: { version_id: id } })).structuredContent.functions;
      const target = fns.find((f) => f.name === null);
      assert.ok(target, JSON.stringify(fns));
      const before = (await client.callTool({ name: 'get_symbol', arguments: { stable_id: target.stable_id } })).structuredContent.symbol;
      const n = 24;
      const results = await Promise.all(Array.from({ length: n }, (_, i) => client.callTool({
        name: 'propose_symbol', arguments: { stable_id: target.stable_id, name: `guess_${i}`, confidence: (i + 1) / (n + 1) } })));
      assert.ok(results.every((r) => r.isError === undefined), JSON.stringify(results.find((r) => r.isError)));
      const after = (await client.callTool({ name: 'get_symbol', arguments: { stable_id: target.stable_id } })).structuredContent.symbol;
      const attempts = after.evidence.length - (before ? before.evidence.length : 0);
      assert.equal(attempts, n, 'one evidence row per attempt');
      assert.equal(after.evidence.filter((e) => e.accepted).length - (before ? before.evidence.filter((e) => e.accepted).length : 0),
        results.filter((r) => r.structuredContent.written).length);
      // The final state is that of a serial order: the most confident proposal won.
      assert.equal(after.name, `guess_${n - 1}`);
    } finally {
      await client.close();
      await srv.stop();
    }
  });

  test('an Oracle name blocks an MCP agent unless the agent is more confident', { timeout: 60000 }, async () => {
    const odb = path.join(dir, 'oracle.db');
    assert.equal(warden(['ingest', v1, '--db', odb, '--no-seed']).code, 0);
    const fn = wardenJson(['funcs', '--db', odb]).find((f) => f.index === 4);
    // The library's Oracle path writes first.
    const w = spawnSync(KB_FIXTURE, [odb, 'oracle', fn.stable_id, 'oracle_greet', '0.8'], { encoding: 'utf8' });
    assert.equal(w.status, 0, w.stderr);
    assert.match(w.stdout, /^accepted /);
    const client = new Client({ name: 'warden-e2e-oracle', version: '0.0.0' });
    await client.connect(new StdioClientTransport({ command: WARDEN, args: ['mcp', '--db', odb], stderr: 'pipe' }));
    try {
      const propose = async (name, confidence) => (await client.callTool({ name: 'propose_symbol', arguments: { stable_id: fn.stable_id, name, confidence } })).structuredContent;
      let r = await propose('agent_low', 0.5);
      assert.equal(r.written, false);
      assert.equal(r.reason, 'rejected: existing oracle annotation has confidence 0.800 >= 0.500');
      r = await propose('agent_equal', 0.8);
      assert.equal(r.written, false, 'equal confidence must not displace the Oracle');
      let sym = (await client.callTool({ name: 'get_symbol', arguments: { stable_id: fn.stable_id } })).structuredContent.symbol;
      assert.equal(sym.name, 'oracle_greet');
      assert.equal(sym.provenance, 'oracle');
      r = await propose('agent_sure', 0.95);
      assert.equal(r.written, true, r.reason);
      sym = (await client.callTool({ name: 'get_symbol', arguments: { stable_id: fn.stable_id } })).structuredContent.symbol;
      assert.equal(sym.name, 'agent_sure');
      assert.equal(sym.provenance, 'agent');
      assert.deepEqual(sym.evidence.map((e) => [e.actor, e.accepted]),
        [['oracle:e2e', true], ['agent:mcp', false], ['agent:mcp', false], ['agent:mcp', true]]);
    } finally {
      await client.close();
    }
    // The CLI's agent path meets the same gate: an Oracle name at 0.9 on another function
    // survives `warden agent --all` (offline proposals carry 0.2-0.35).
    const other = wardenJson(['funcs', '--db', odb]).find((f) => f.index === 1);
    assert.match(spawnSync(KB_FIXTURE, [odb, 'oracle', other.stable_id, 'oracle_open', '0.9'], { encoding: 'utf8' }).stdout, /^accepted /);
    const run = wardenJson(['agent', '--backend', 'offline', '--all', '--version', 'v1', '--db', odb]);
    const detail = run.details.find((d) => d.func_index === 1);
    assert.equal(detail.outcome, 'economy_reject', JSON.stringify(detail));
    assert.match(detail.reason, /^rejected: existing oracle annotation has confidence 0\.900/);
    assert.equal(wardenJson(['funcs', '--db', odb]).find((f) => f.index === 1).name, 'oracle_open');
  });

  test('8 concurrent MCP clients proposing on one KB lose nothing', { timeout: 90000 }, async () => {
    const cdb = path.join(dir, 'concurrent.db');
    assert.equal(warden(['ingest', v1, '--db', cdb, '--no-seed']).code, 0);
    const target = wardenJson(['funcs', '--db', cdb]).find((f) => f.index === 2);
    const clients = await Promise.all(Array.from({ length: 8 }, async (_, c) => {
      const client = new Client({ name: `warden-e2e-${c}`, version: '0.0.0' });
      await client.connect(new StdioClientTransport({ command: WARDEN, args: ['mcp', '--db', cdb], stderr: 'pipe' }));
      return client;
    }));
    try {
      const perClient = 10;
      const results = await Promise.all(clients.map((client, c) => Promise.all(Array.from({ length: perClient }, (_, i) => {
        const confidence = Math.round((c * perClient + i + 1) * 1000 / (8 * perClient + 1)) / 1000;
        return client.callTool({ name: 'propose_symbol', arguments: { stable_id: target.stable_id, name: `c${c}_n${i}`, confidence } });
      }))));
      const flat = results.flat();
      assert.ok(flat.every((r) => r.isError === undefined), JSON.stringify(flat.find((r) => r.isError)));
      const sym = (await clients[0].callTool({ name: 'get_symbol', arguments: { stable_id: target.stable_id } })).structuredContent.symbol;
      assert.equal(sym.evidence.length, 8 * perClient, 'one evidence row per attempt');
      assert.equal(sym.evidence.filter((e) => e.accepted).length, flat.filter((r) => r.structuredContent.written).length);
      // Every accepted write raised the confidence (invariant 5), so the last accepted is the most confident.
      let last = -1;
      for (const e of sym.evidence.filter((x) => x.accepted)) {
        assert.ok(e.confidence > last, `accepted ${e.confidence} after ${last}`);
        last = e.confidence;
      }
      assert.equal(sym.name, 'c7_n9');
      assert.equal(sym.confidence, last);
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
  });

  test('the Inspector CLI lists and calls the tools', { timeout: 90000 }, async () => {
    // The Inspector takes a command; a wrapper script carries warden's own arguments.
    const wrapper = path.join(dir, 'warden-mcp.sh');
    writeFileSync(wrapper, `#!/bin/sh\nexec '${WARDEN}' mcp --db '${db}'\n`);
    chmodSync(wrapper, 0o755);
    const home = mkdtempSync(path.join(os.tmpdir(), 'warden-inspector-'));
    const inspector = (args) => new Promise((resolve) => {
      execFile(INSPECTOR_BIN, ['--cli', '--format', 'json', '-q', wrapper, ...args], {
        cwd: REPO_ROOT, env: node22Env({ HOME: home, MCP_CATALOG_PATH: path.join(home, 'mcp.json') }),
        timeout: 40000, maxBuffer: 16 * 1024 * 1024,
      }, (error, stdout, stderr) => {
        const line = stdout.trim().split('\n').filter((l) => l.startsWith('{')).pop();
        resolve({ code: error ? error.code : 0, json: line ? JSON.parse(line) : undefined, stderr });
      });
    });
    try {
      const list = await inspector(['--method', 'tools/list']);
      assert.equal(list.code, 0, list.stderr);
      assert.deepEqual(list.json.result.tools.map((t) => t.name).sort(), ['agent_backends', 'carry_annotations', 'coverage',
        'diff_versions', 'get_function_facts', 'get_symbol', 'identify_runtime', 'list_functions', 'list_versions', 'propose_symbol', 'run_agent_pass']);
      const call = await inspector(['--method', 'tools/call', '--tool-name', 'list_versions']);
      assert.equal(call.code, 0, call.stderr);
      assert.deepEqual(call.json.result.structuredContent.versions.map((v) => v.label), ['v1', 'v2']);
      const bad = await inspector(['--method', 'tools/call', '--tool-name', 'coverage', '--tool-args-json', '{"version_id":999}']);
      assert.equal(bad.code, 5, bad.stderr);
      assert.equal(bad.json.result.isError, true);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  test('run_agent_pass sends progress for its progress token, then one result', { timeout: 60000 }, async () => {
    const pdb = path.join(dir, 'progress.db');
    assert.equal(warden(['ingest', v1, '--db', pdb, '--no-seed']).code, 0);
    const s = await StdioServer.start(['mcp', '--db', pdb], { bin: WARDEN });
    try {
      await s.initialize();
      const from = s.lines.length;
      const r = await s.request('tools/call', { name: 'run_agent_pass', arguments: { version_id: 1, backend: 'offline' },
        _meta: { progressToken: 'pass-1' } }, { timeout: 30000 });
      assert.equal(r.result.isError, undefined, JSON.stringify(r));
      const after = s.lines.slice(from);
      const progress = after.filter((l) => l.msg?.method === 'notifications/progress');
      assert.deepEqual(progress.map((l) => [l.msg.params.progressToken, l.msg.params.progress, l.msg.params.total]),
        [['pass-1', 1, 4], ['pass-1', 2, 4], ['pass-1', 3, 4], ['pass-1', 4, 4]]);
      const result = after.findIndex((l) => l.msg?.id !== undefined && l.msg?.method === undefined);
      assert.ok(after.indexOf(progress.at(-1)) < result, 'progress after the result');
    } finally {
      s.proc.kill('SIGTERM');
    }
  });

  test('run_agent_pass can be cancelled: no result, and the pass stops', { timeout: 90000 }, async (t) => {
    const sqljs = path.join(REPO_ROOT, 'node_modules', 'sql.js', 'dist', 'sql-wasm.wasm');
    if (!existsSync(sqljs)) { t.skip('node_modules/sql.js is absent'); return; }
    const cdb = path.join(dir, 'cancel.db');
    assert.equal(warden(['ingest', sqljs, '--db', cdb, '--no-seed']).code, 0);
    const s = await StdioServer.start(['mcp', '--db', cdb], { bin: WARDEN });
    try {
      await s.initialize();
      const from = s.lines.length;
      s.send({ jsonrpc: '2.0', id: 77, method: 'tools/call', params: { name: 'run_agent_pass', arguments: { version_id: 1, backend: 'offline' }, _meta: { progressToken: 'c' } } });
      // Cancel once the pass has visibly started.
      await s.waitFor((l) => l.msg?.method === 'notifications/progress', { timeout: 30000, from });
      s.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 77, reason: 'e2e' } });
      await s.quiet(1000);
      assert.equal(s.lines.slice(from).filter((l) => l.msg?.id === 77).length, 0, 'a cancelled request was answered');
      // The server is still up and the pass did not finish.
      const cov = await s.request('tools/call', { name: 'coverage', arguments: { version_id: 1 } });
      const c = cov.result.structuredContent;
      assert.ok(c.agent_named < c.defined, `the pass ran to the end: ${JSON.stringify(c)}`);
    } finally {
      s.proc.kill('SIGTERM');
    }
  });

  test('reads are answered while agent passes run; passes beyond the limit are refused', { timeout: 60000 }, async () => {
    // An OpenAI stand-in that holds every request until released: each pass then sits in its
    // backend call, holding a worker, for as long as the test wants.
    const held = [];
    let released = false;
    const answer = (res) => { res.writeHead(400, { 'content-type': 'application/json' }); res.end('{"error":{"message":"stand-in"}}'); };
    const provider = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => { if (released) answer(res); else held.push(res); });
    });
    await new Promise((resolve) => provider.listen(0, '127.0.0.1', resolve));
    const sdb = path.join(dir, 'starve.db');
    assert.equal(warden(['ingest', v1, '--db', sdb, '--no-seed']).code, 0);
    const s = await StdioServer.start(['mcp', '--db', sdb, '--consent', 'run_agent_pass'], { bin: WARDEN, env: { PATH: process.env.PATH, HOME: dir,
      XDG_CONFIG_HOME: dir, OPENAI_API_KEY: 'sk-e2e', OPENAI_BASE_URL: `http://127.0.0.1:${provider.address().port}` } });
    try {
      await s.initialize();
      const from = s.lines.length;
      // As many passes as the server has workers (4): uncapped, they would take every worker.
      const ids = [201, 202, 203, 204];
      for (const id of ids) {
        s.send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'run_agent_pass', arguments: { version_id: 1, backend: 'openai' } } });
      }
      await s.waitFor((l) => l.msg?.id !== undefined && ids.includes(l.msg.id) && l.msg.result?.isError, { timeout: 10000, from });
      const deadline = Date.now() + 10000;
      while (held.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      assert.equal(held.length, 2, 'two passes reached the backend');
      const refused = s.lines.slice(from).filter((l) => ids.includes(l.msg?.id));
      assert.equal(refused.length, 2, JSON.stringify(refused.map((l) => l.msg)));
      for (const l of refused) {
        assert.equal(l.msg.result.isError, true);
        assert.match(l.msg.result.content[0].text, /2 agent passes are already running/);
      }
      // Reads while both passes run.
      const versions = await s.request('tools/call', { name: 'list_versions', arguments: {} }, { timeout: 5000 });
      assert.equal(versions.result.structuredContent.versions.length, 1);
      const fns = await s.request('tools/call', { name: 'list_functions', arguments: { version_id: 1 } }, { timeout: 5000 });
      const sym = await s.request('tools/call', { name: 'get_symbol', arguments: { stable_id: fns.result.structuredContent.functions[0].stable_id } }, { timeout: 5000 });
      assert.equal(sym.result.isError, undefined, JSON.stringify(sym));
      const facts = await s.request('tools/call', { name: 'get_function_facts', arguments: { version_id: 1, func_index: 4 } }, { timeout: 5000 });
      assert.deepEqual(facts.result.structuredContent.facts.referenced_strings, ['hello world']);
      assert.equal(s.lines.slice(from).filter((l) => ids.includes(l.msg?.id)).length, 2, 'a held pass answered');
      // Released, the running passes finish and answer.
      released = true;
      for (const res of held.splice(0)) answer(res);
      await s.waitFor(() => s.lines.slice(from).filter((l) => ids.includes(l.msg?.id)).length === 4, { timeout: 30000, from });
    } finally {
      s.proc.kill('SIGTERM');
      provider.closeAllConnections?.();
      provider.close();
    }
  });

  test('mcp with a missing --db exits non-zero and creates nothing', () => {
    const missing = path.join(dir, 'missing.db');
    const r = warden(['mcp', '--db', missing]);
    assert.equal(r.code, 3, r.stderr);
    assert.ok(!existsSync(missing));
  });

  test('mcp takes the policy flags every server shares; --listen stays an alias', () => {
    const help = warden(['mcp', '--help']);
    assert.equal(help.code, 0, help.stderr);
    for (const flag of ['--http', '--host', '--auth', '--token-file', '--jwks-file', '--issuer', '--resource',
      '--allow-root', '--audit-log', '--rate-limit', '--burst', '--policy', '--listen', '--transport']) {
      assert.match(help.stdout, new RegExp(`^\\s+${flag}\\b`, 'm'), `warden mcp --help lacks ${flag}`);
    }
    let r = warden(['mcp', '--db', db, '--listen', '127.0.0.1:0', '--http', '0']);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /--listen HOST:PORT cannot be combined with --host or --http/);
    r = warden(['mcp', '--db', db, '--listen', 'nonsense']);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /--listen must be HOST:PORT/);
    // Without authentication only loopback may be served, whichever spelling names the host.
    for (const args of [['--listen', '0.0.0.0:0'], ['--host', '0.0.0.0', '--http', '0']]) {
      r = warden(['mcp', '--db', db, ...args]);
      assert.equal(r.code, 2, `${args}: ${r.stderr}`);
      assert.match(r.stderr, /loopback/);
    }
  });

  test('mcp --audit-log records every call; audit verify and stats read it; a changed record fails', { timeout: 60000 }, async () => {
    const log = path.join(dir, 'warden-audit.jsonl');
    const client = new Client({ name: 'warden-e2e-audit', version: '0.0.0' });
    await client.connect(new StdioClientTransport({ command: WARDEN, args: ['mcp', '--db', db, '--audit-log', log],
      stderr: 'pipe', env: { PATH: process.env.PATH, HOME: dir, XDG_CONFIG_HOME: dir } }));
    try {
      await client.callTool({ name: 'list_versions', arguments: {} });
      await client.callTool({ name: 'coverage', arguments: { version_id: 1 } });
    } finally {
      await client.close();
    }
    const lines = readFileSync(log, 'utf8').split('\n').filter(Boolean);
    assert.ok(lines.length >= 2, `audit log: ${lines.length} records`);
    let r = warden(['audit', 'verify', log]);
    assert.equal(r.code, 0, r.stderr + r.stdout);
    r = warden(['audit', 'stats', log, '--json']);
    assert.equal(r.code, 0, r.stderr);
    const stats = JSON.parse(r.stdout);
    assert.equal(stats.totalEvents, lines.length, r.stdout);
    assert.equal(stats.byType.tool_call, 2, r.stdout);
    // One record changed: the chain breaks there.
    const tampered = path.join(dir, 'warden-audit-tampered.jsonl');
    const i = lines.findIndex((l) => l.includes('list_versions'));
    const changed = [...lines];
    changed[i] = changed[i].replace('list_versions', 'list_functions');
    writeFileSync(tampered, changed.join('\n') + '\n');
    r = warden(['audit', 'verify', tampered]);
    assert.equal(r.code, 1, r.stdout + r.stderr);
  });
});
