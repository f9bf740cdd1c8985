// Kōdo deep nesting end to end (issue 17 item 1): a method chain of 5,000 calls, `1 + 1 + ... + 1`
// with 100,000 terms, and random deep nests (chains, parentheses, blocks, closures, mixed) at 10,
// 100 and 1,000 times the parser's nesting limit. `kodoc check` must exit with its ordinary
// "program has errors" status (1, not a signal) and say the program nests too deeply; one
// kodo-mcp process (with its worker threads, whose stacks may be smaller than the main thread's)
// must answer each such call with that diagnostic and then answer the next request.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { BUILD_DIR } from './lib/env.mjs';

const CLI_DIR = path.join(BUILD_DIR, 'src', 'kodo', 'cli');
const KODO_MCP = path.join(CLI_DIR, 'kodo-mcp');
const KODOC = path.join(CLI_DIR, 'kodoc');

const LIMIT = 256; // ast::kMaxNestingDepth
const TOO_DEEP = /nesting too deep \(more than 256 levels\) at Span \{ start: \d+, end: \d+ \}/;

function program(expr) {
  return `module deep {\n    meta { purpose: "deep" }\n    fn main() -> Int {\n        let v = ${expr}\n        return 0\n    }\n}\n`;
}

// The two programs.
function methodChain(calls) {
  const parts = ['x'];
  for (let i = 0; i < calls; i++) parts.push(i % 2 === 0 ? '.f()' : '.gg(1)');
  return program(parts.join(''));
}
function onesSum(terms) {
  return program(Array(terms).fill('1').join(' + '));
}

// Nesting constructs: the text before and after the wrapped expression.
const WRAPPERS = [
  ['(', ')'], ['{ ', ' }'], ['|y: Int| ', ''], ['|y: Int| { ', ' }'], ['if c { ', ' } else { x }'],
  ['- ', ''], ['f(', ')'], ['', '.m()'], ['', '.f'], ['', ' ?'], ['', ' + x'], ['x * ', ''],
  ['', ' ?? x'], ['match x { _ => ', ' }'], ['P { a: ', ' }'], ['(x, ', ')'],
];

// A deterministic generator (mulberry32), so a failure names a seed that reproduces it.
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// `n` wrappers around `x`: all of one kind (`kind` an index), or random ones (`kind` null).
function nest(n, kind, seed) {
  const next = rng(seed);
  const before = [];
  const after = [];
  for (let i = 0; i < n; i++) {
    const [b, a] = WRAPPERS[kind ?? Math.floor(next() * WRAPPERS.length)];
    before.push(b);
    after.push(a);
  }
  return program(before.join('') + 'x' + after.reverse().join(''));
}

// The cases: the programs, then the shapes it names and random mixes at 10x, 100x and
// 1,000x the limit.
function cases() {
  const out = [
    { name: 'method chain of 5,000 calls', source: methodChain(5000) },
    { name: '1 + 1 + ... + 1, 100,000 terms', source: onesSum(100000) },
  ];
  const shapes = { chain: 7, sum: 10, parens: 0, blocks: 1, closures: 2 };
  for (const factor of [10, 100, 1000]) {
    const n = factor * LIMIT;
    for (const [shape, kind] of Object.entries(shapes)) {
      out.push({ name: `${shape} x${n}`, source: nest(n, kind, factor) });
    }
    out.push({ name: `random x${n}`, source: nest(n, null, 17 + factor) });
  }
  return out;
}

const SMALL = program('1 + 2');

before(() => {
  for (const bin of [KODO_MCP, KODOC]) assert.ok(existsSync(bin), `binary not found: ${bin} (build it, or set TROVE_BUILD_DIR)`);
});

describe('kodoc check on deep programs', () => {
  let dir;
  after(() => { if (dir) rmSync(dir, { recursive: true, force: true }); });

  test('each is a parse error, exit 1, never a signal', { timeout: 120000 }, () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'kodo-deep-'));
    for (const { name, source } of cases()) {
      const file = path.join(dir, 'deep.ko');
      writeFileSync(file, source);
      const r = spawnSync(KODOC, ['check', file], { encoding: 'utf8', timeout: 30000, maxBuffer: 64 << 20 });
      assert.equal(r.signal, null, `${name}: killed by ${r.signal}`);
      assert.equal(r.status, 1, `${name}: exit ${r.status}: ${r.stderr}`);
      assert.match(r.stderr, /nesting too deep \(more than 256 levels\)/, name);
      const json = spawnSync(KODOC, ['check', file, '--json-errors'], { encoding: 'utf8', timeout: 30000, maxBuffer: 64 << 20 });
      assert.equal(json.signal, null, `${name} --json-errors: killed by ${json.signal}`);
      assert.equal(json.status, 1, name);
      const report = JSON.parse(json.stdout);
      assert.equal(report.errors.length, 1, name);
      assert.match(report.errors[0].message, TOO_DEEP, name);
      assert.ok(report.errors[0].span, `${name}: no span`);
    }
  });
});

describe('one kodo-mcp process and deep programs', () => {
  test('every tool answers each with the diagnostic, then the next request', { timeout: 300000 }, async () => {
    const client = new Client({ name: 'kodo-deep-e2e', version: '0.0.0' });
    const transport = new StdioClientTransport({ command: KODO_MCP, args: ['--workers', '2'], stderr: 'pipe' });
    await client.connect(transport);
    try {
      for (const { name, source } of cases()) {
        const check = await client.callTool({ name: 'kodo.check', arguments: { source } });
        assert.notEqual(check.isError, true, `${name}: ${JSON.stringify(check).slice(0, 300)}`);
        const sc = check.structuredContent;
        assert.equal(sc.status, 'failed', name);
        assert.equal(sc.phase, 'parse', name);
        assert.equal(sc.errors.length, 1, name);
        assert.equal(sc.errors[0].code, 'E0100', name);
        assert.match(sc.errors[0].message, TOO_DEEP, name);
        assert.ok(sc.errors[0].span, `${name}: no span`);
        for (const tool of ['kodo.describe', 'kodo.annotate', 'kodo.fix', 'kodo.build']) {
          const r = await client.callTool({ name: tool, arguments: { source } });
          assert.match(JSON.stringify(r), /nesting too deep/, `${tool} on ${name}`);
        }
        // The same process answers the next request.
        const next = await client.callTool({ name: 'kodo.check', arguments: { source: SMALL } });
        assert.deepEqual(next.structuredContent, { errors: [], module: 'deep', status: 'ok' }, `after ${name}`);
      }
      // Deep and ordinary calls in flight together, on both workers.
      const all = await Promise.all(cases().slice(0, 4).flatMap(({ source }) => [
        client.callTool({ name: 'kodo.check', arguments: { source } }),
        client.callTool({ name: 'kodo.check', arguments: { source: SMALL } }),
      ]));
      all.forEach((r, i) => assert.equal(r.structuredContent.status, i % 2 === 0 ? 'failed' : 'ok'));
      await client.ping();
    } finally {
      await client.close();
    }
  });
});
