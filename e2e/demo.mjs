// The demo: each Trove server doing its main job, end to end and offline, as a user sees it in an
// MCP client. Every MCP step goes through the official TypeScript SDK client over stdio; the CLI
// steps run the same binaries a user would.
//
//   TROVE_BUILD_DIR=build node e2e/demo.mjs      (scripts/demo builds first, then runs this)
//
// Output: a few lines per server, then one summary line per server ("WARDEN: ok ...",
// "Kōdo: ok ...", "Librarian: ok ...") and the total time. Exit 0 when all three are ok, else 1.
// e2e/demo.test.mjs runs this file and checks those lines.

import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { REPO_ROOT } from './lib/env.mjs';
import { KODO_MCP, LIBRARIAN, WARDEN } from './lib/servers.mjs';

const FIXTURES = path.join(REPO_ROOT, 'testdata', 'warden', 'fixtures');
const scratch = mkdtempSync(path.join(os.tmpdir(), 'trove-demo-'));
const rel = (p) => path.relative(REPO_ROOT, p);
const secs = (ms) => `${(ms / 1000).toFixed(1)} s`;
const say = (line = '') => console.log(line);
const step = (line) => console.log(`  ${line}`);

class DemoError extends Error {}
function expect(cond, what) {
  if (!cond) throw new DemoError(what);
}

// Runs a CLI the way a user would; returns its stdout, or throws with its stderr.
function cli(bin, args, { json = false } = {}) {
  const r = spawnSync(bin, json ? [...args, '--json'] : args, { encoding: 'utf8', timeout: 120000 });
  if (r.status !== 0) {
    throw new DemoError(`${path.basename(bin)} ${args.join(' ')}: exit ${r.status}: ${(r.stderr || '').trim()}`);
  }
  return json ? JSON.parse(r.stdout) : r.stdout;
}

function versionOf(bin) {
  return spawnSync(bin, ['--version'], { encoding: 'utf8' }).stdout.trim().split('\n')[0];
}

// Starts a server over stdio as an MCP client does. Its stderr is drained (a full pipe would stall
// the server) and only shown when the demo fails.
async function connect(command, args) {
  const client = new Client({ name: 'trove-demo', version: '1.0.0' });
  const transport = new StdioClientTransport({ command, args, stderr: 'pipe' });
  let tail = '';
  transport.stderr?.on('data', (d) => { tail = (tail + d).slice(-2000); });
  client.onerror = () => { if (tail) console.error(`${path.basename(command)} stderr: ${tail}`); };
  await client.connect(transport);
  return client;
}

// Calls a tool; an isError result ends the section with its text.
async function call(client, name, args, options = {}) {
  const r = await client.callTool({ name, arguments: args }, undefined, options);
  if (r.isError) throw new DemoError(`${name}: ${r.content?.[0]?.text ?? 'isError'}`);
  return r.structuredContent ?? JSON.parse(r.content[0].text);
}

const short = (v, n = 70) => {
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
};

// --- WARDEN: ingest, coverage, an offline agent pass, a human name the agent cannot take, exports.
async function warden() {
  const db = path.join(scratch, 'warden.db');
  const wasm = path.join(FIXTURES, 'app-O2.wasm');
  const glue = path.join(FIXTURES, 'app-O2.js');
  say(`$ warden --db warden.db ingest ${rel(wasm)} --glue ${rel(glue)}`);
  const ingest = cli(WARDEN, ['--db', db, 'ingest', wasm, '--glue', glue]).trim().split('\n');
  step(ingest[0]);
  if (ingest[2]) step(ingest[2]);
  const before = cli(WARDEN, ['--db', db, 'coverage'], { json: true });
  say(`$ warden coverage`);
  step(`${before.named} of ${before.defined} defined functions named (${before.coverage_pct.toFixed(1)} %)`);

  const client = await connect(WARDEN, ['mcp', '--db', db]);
  try {
    const { tools } = await client.listTools();
    say(`MCP client -> warden mcp --db warden.db: ${tools.length} tools (${tools.map((t) => t.name).join(', ')})`);
    const { versions } = await call(client, 'list_versions', {});
    const version_id = versions[0].id;
    const pass = await call(client, 'run_agent_pass', { version_id, backend: 'offline' });
    step(`run_agent_pass {backend: "offline"} -> ${pass.proposed} proposed, ${pass.written} written, ` +
         `${pass.rejected_by_verifier + pass.rejected_by_economy} rejected`);
    expect(pass.written > 0, 'the offline agent pass wrote no name');
    const cov = await call(client, 'coverage', { version_id });
    step(`coverage -> ${cov.named} of ${cov.defined} named (${cov.coverage_pct.toFixed(1)} %), ${cov.agent_named} by the agent`);

    // A human names one of the functions the agent just named: the human wins and locks it.
    const target = pass.details.find((d) => d.outcome === 'written');
    const humanName = 'checksum_bytes';
    say(`$ warden set-name func[${target.func_index}] ${humanName} --summary "sums the bytes of a buffer"` +
        `   (was ${target.name}, agent)`);
    cli(WARDEN, ['--db', db, 'set-name', `func[${target.func_index}]`, humanName,
      '--summary', 'sums the bytes of a buffer']);
    const clobber = await call(client, 'propose_symbol',
      { stable_id: target.stable_id, name: 'agent_guess', confidence: 1 });
    step(`propose_symbol {name: "agent_guess", confidence: 1} -> written: ${clobber.written}, ${short(clobber.reason, 60)}`);
    expect(clobber.written === false, 'an agent proposal overwrote a human name');
    const { symbol } = await call(client, 'get_symbol', { stable_id: target.stable_id });
    step(`get_symbol -> ${symbol.name} (${symbol.provenance}${symbol.locked ? ', locked' : ''})`);
    expect(symbol.name === humanName, `the human name was lost: ${symbol.name}`);

    const outDir = path.join(scratch, 'exports');
    mkdirSync(outDir);
    const written = [];
    for (const [format, file] of [['headers', 'app.h'], ['pseudo', 'app.pseudo.c'], ['kb-text', 'app.kb.txt'],
      ['ghidra', 'app_ghidra.py']]) {
      const out = path.join(outDir, file);
      cli(WARDEN, ['--db', db, 'export', 'v1', '--format', format, '--out', out]);
      const text = readFileSync(out, 'utf8');
      if (format !== 'pseudo') expect(text.includes(humanName), `${format} export lacks the human name`);
      written.push(`${file} (${statSync(out).size.toLocaleString('en')} B)`);
    }
    say(`$ warden export v1 --format headers|pseudo|kb-text|ghidra --out ...`);
    step(written.join(', '));
    return `${cov.named}/${cov.defined} functions named (${cov.agent_named} by the offline agent), ` +
           `human name kept against the agent, ${written.length} exports written`;
  } finally {
    await client.close();
  }
}

// --- Kōdo: check a program with errors, fix it with kodo.fix patches, check it clean, describe, explain.
const KODO_SOURCE = `module inventory {
    meta { purpose: "stock levels of a small shop" }
    struct Item { count: Int, price: Int }
    fn restock(count: Int, extra: Int) -> Int {
        let total = count + extra
        return totl
    }
    fn value(item: Item) -> Int {
        let units = item.count
        return unit * item.price
    }
    fn main() -> Int {
        return restock(3, 4)
    }
}
`;

// Applies byte-offset patches from the last to the first, skipping any that overlap a later one.
function applyPatches(source, patches) {
  let out = Buffer.from(source, 'utf8');
  let limit = Infinity;
  for (const p of [...patches].sort((a, b) => b.start_offset - a.start_offset)) {
    if (p.end_offset > limit) continue;
    out = Buffer.concat([out.subarray(0, p.start_offset), Buffer.from(p.replacement, 'utf8'), out.subarray(p.end_offset)]);
    limit = p.start_offset;
  }
  return out.toString('utf8');
}

async function kodo() {
  const client = await connect(KODO_MCP, []);
  try {
    const { tools } = await client.listTools();
    say(`MCP client -> kodo-mcp: ${tools.length} tools (${tools.map((t) => t.name).join(', ')})`);
    let source = KODO_SOURCE;
    const first = await call(client, 'kodo.check', { source, filename: 'inventory.ko' });
    expect(first.status === 'failed', `kodo.check found no error in the broken program: ${short(first)}`);
    step(`kodo.check inventory.ko -> ${first.status} (${first.phase}), ${first.errors.length} errors:`);
    for (const e of first.errors) step(`  ${e.code} ${e.message.replace(/ at Span \{.*\}$/, '')}; ${e.suggestion ?? ''}`);
    let patches = 0;
    let rounds = 0;
    for (; rounds < 3; ++rounds) {
      const check = rounds === 0 ? first : await call(client, 'kodo.check', { source });
      if (check.status === 'ok') break;
      const fix = await call(client, 'kodo.fix', { source });
      expect(fix.patches.length > 0, `kodo.fix offered no patch for ${short(check.errors.map((e) => e.code))}`);
      step(`kodo.fix -> ${fix.patches.map((p) => `${p.error_code} ${p.description}`).join('; ')}`);
      patches += fix.patches.length;
      source = applyPatches(source, fix.patches);
    }
    const clean = await call(client, 'kodo.check', { source });
    step(`kodo.check (patched) -> ${clean.status}, ${clean.errors.length} errors`);
    expect(clean.status === 'ok', `the patched program still fails: ${short(clean.errors)}`);
    const d = await call(client, 'kodo.describe', { source });
    const sig = (f) => `${f.name}(${f.params.map((p) => p.name).join(', ')})`;
    step(`kodo.describe -> module ${d.module} ("${d.meta?.purpose}"): ${d.functions.map(sig).join(', ')}; ` +
         `types ${d.types.map((t) => t.name ?? t).join(', ') || 'none'}`);
    const code = first.errors[0].code;
    const x = await call(client, 'kodo.explain', { code });
    step(`kodo.explain ${code} -> ${x.title}: ${short(x.explanation, 80)}`);
    expect(x.title && x.explanation, `kodo.explain ${code} gave no explanation`);
    return `${first.errors.length} errors repaired by ${patches} kodo.fix patches in ${rounds} round(s), ` +
           `the program checks clean, describe and explain answered`;
  } finally {
    await client.close();
  }
}

// --- Librarian: index this repository, then answer three intents with packs, evidence and hints.
const INTENTS = [
  'how does the WARDEN economy decide whether an agent may overwrite a human name',
  'where does kodo.fix build the rename patch for an undefined name',
  'how does the Streamable HTTP transport check the Mcp-Session-Id header',
];

// A copy of the committed tree (git archive), so that the index lands outside the checkout; without
// git, the sources are copied.
function copyRepository(dest) {
  mkdirSync(dest);
  try {
    const tar = execFileSync('git', ['-C', REPO_ROOT, 'archive', '--format=tar', 'HEAD'], { maxBuffer: 1 << 30 });
    execFileSync('tar', ['-x', '-C', dest], { input: tar });
    return 'git archive HEAD';
  } catch {
    const skip = new Set(['.git', 'node_modules', '.librarian']);
    cpSync(REPO_ROOT, dest, {
      recursive: true,
      filter: (src) => !skip.has(path.basename(src)) && !/^build/.test(path.relative(REPO_ROOT, src)),
    });
    return 'a copy of the checkout';
  }
}

async function librarian() {
  const ws = path.join(scratch, 'trove');
  const how = copyRepository(ws);
  // bootstrap is high-risk (it writes .librarian/): the operator pre-approves it, as this SDK
  // client cannot be asked by elicitation.
  const client = await connect(LIBRARIAN, ['mcp', '--allow-root', scratch, '--consent', 'bootstrap']);
  try {
    const { tools } = await client.listTools();
    say(`MCP client -> librarian mcp: ${tools.length} tools (${tools.map((t) => t.name).join(', ')}); workspace: this repository (${how})`);
    const t0 = performance.now();
    let progressed = 0;
    const boot = await call(client, 'bootstrap', { workspace: ws }, {
      onprogress: () => { ++progressed; }, resetTimeoutOnProgress: true, timeout: 120000 });
    const s = boot.stats;
    expect(boot.success, `bootstrap failed: ${short(boot)}`);
    step(`bootstrap -> ${s.filesProcessed} files (${Object.keys(s.languages).length} languages), ${s.functionsIndexed} functions, ` +
         `${s.typesIndexed} types, ${s.contextPacksTotal} packs in ${secs(performance.now() - t0)}`);
    let answered = 0;
    for (const intent of INTENTS) {
      const q = await call(client, 'query', { workspace: ws, intent, includeEvidence: true });
      say(`  query "${intent}"  [${q.intentTypeUsed}]`);
      const score = new Map((q.ranking ?? []).map((r) => [r.packId, r.score]));
      for (const p of q.packs.slice(0, 3)) {
        step(`  ${(score.get(p.packId) ?? 0).toFixed(2)} ${p.packType.padEnd(16)} ${short(p.targetId.replace(/::trove::/, '::'), 78)}`);
      }
      const ev = q.evidenceByPack?.[0]?.evidence?.[0];
      if (ev) step(`  evidence: ${ev.file}:${ev.startLine}-${ev.endLine}  ${short(ev.snippet.split('\n')[0].trim(), 60)}`);
      const hint = q.drillDownHints?.[0];
      step(`  hint: ${hint ? short(hint, 100) : '(none)'}`);
      if (q.packs.length > 0 && ev) ++answered;
    }
    expect(answered === INTENTS.length, `${INTENTS.length - answered} intents got no pack with evidence`);
    return `${s.filesProcessed} files indexed (${s.functionsIndexed} functions), ${answered} intents answered with packs and evidence`;
  } finally {
    await client.close();
  }
}

async function main() {
  const t0 = performance.now();
  for (const bin of [WARDEN, KODO_MCP, LIBRARIAN]) {
    if (!existsSync(bin)) {
      console.error(`demo: ${bin} not found (build first: scripts/build release, or set TROVE_BUILD_DIR)`);
      process.exit(2);
    }
  }
  const results = [];
  for (const [name, bin, run] of [['WARDEN', WARDEN, warden], ['Kōdo', KODO_MCP, kodo], ['Librarian', LIBRARIAN, librarian]]) {
    say(`\n== ${name} (${versionOf(bin)})`);
    const start = performance.now();
    try {
      const summary = await run();
      results.push(`${name}: ok, ${summary} (${secs(performance.now() - start)})`);
    } catch (e) {
      const why = e instanceof DemoError ? e.message : (e.stack ?? String(e));
      say(`  FAILED: ${why}`);
      results.push(`${name}: FAILED, ${why.split('\n')[0]} (${secs(performance.now() - start)})`);
    }
  }
  say('\n== summary');
  for (const r of results) say(r);
  const ok = results.filter((r) => / ok, /.test(r)).length;
  say(`demo: ${ok} of ${results.length} servers ok in ${secs(performance.now() - t0)} (after the build)`);
  rmSync(scratch, { recursive: true, force: true });
  process.exit(ok === results.length ? 0 : 1);
}

main().catch((e) => {
  console.error(`demo failed: ${e.stack ?? e}`);
  rmSync(scratch, { recursive: true, force: true });
  process.exit(1);
});
