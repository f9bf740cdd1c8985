#!/usr/bin/env node
// The release-notes check of `warden diff` on a published pair without names (docs/warden.md
// §9.3): sql.js 1.8.0 -> 1.16.0. It runs the real CLI (init, ingest with the glue, diff --json,
// funcs --json) in a temporary directory, then checks the diff's classification against an
// expectations file whose every entry cites its source (sqljs_1.8.0_1.16.0.json beside this file).
//
// Names the matcher never sees are recovered here, independently of WARDEN:
//   * exports: the glue's `Module._NAME = wasmExports.X` bindings (both shapes Emscripten used
//     in these releases), resolved through the module's export section;
//   * SQL functions: SQLite's built-in FuncDef table in the data segment (zName at offset 32,
//     xSFunc at 16, a table index resolved through the element segment), found by scanning
//     for 40-byte records whose name pointer is a string and whose pNext and hash are zero.
// The SQLite version and compile options are read by running each module under node.
//
// usage: check.mjs --warden BIN [--modules DIR] [--expect FILE] [--allow-known]
//   --modules      where sql.js-1.8.0/ and sql.js/ are (default: $TROVE_REAL_MODULES_DIR, else
//                  the repository's node_modules); missing packages skip with exit 77
//   --allow-known  exit 0 when the disagreements are exactly the file's known_disagreements
//                  (each with its written explanation); a new one, or a known one that now
//                  agrees, fails. Without it any disagreement fails.
// Exit status: 0 all agree, 1 a disagreement, 2 usage or a failed step, 77 pair not installed.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {spawnSync} from 'node:child_process';
import {fileURLToPath} from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');

function parseArgs(argv) {
  const a = {expect: path.join(here, 'sqljs_1.8.0_1.16.0.json'), allowKnown: false};
  a.modules = process.env.TROVE_REAL_MODULES_DIR || path.join(root, 'node_modules');
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    if (k === '--warden' && i + 1 < argv.length) a.warden = argv[++i];
    else if (k === '--modules' && i + 1 < argv.length) a.modules = argv[++i];
    else if (k === '--expect' && i + 1 < argv.length) a.expect = argv[++i];
    else if (k === '--allow-known') a.allowKnown = true;
    else return null;
  }
  if (!a.warden) return null;
  a.warden = path.resolve(a.warden);  // the CLI runs in a temporary directory
  return a;
}

// --- the module: imports, exports, element and data segments ------------------------------
function readWasm(buf) {
  let p = 8;
  const w = {imports: 0, exports: new Map(), table: new Map(), segments: []};
  const uleb = () => {
    let x = 0, s = 0, b;
    do { b = buf[p++]; x += (b & 0x7f) * 2 ** s; s += 7; } while (b & 0x80);
    return x;
  };
  const sleb32 = () => {
    let x = 0, s = 0, b;
    do { b = buf[p++]; x |= (b & 0x7f) << s; s += 7; } while (b & 0x80);
    if (s < 32 && (b & 0x40)) x |= -1 << s;
    return x;
  };
  const offsetExpr = () => {
    const op = buf[p++];
    let v = null;
    if (op === 0x41) v = sleb32();
    else if (op === 0x23) uleb();
    else throw new Error(`unsupported offset expression 0x${op.toString(16)} at ${p - 1}`);
    if (buf[p++] !== 0x0b) throw new Error(`offset expression not ended at ${p - 1}`);
    return v;
  };
  const limits = () => { const f = uleb(); uleb(); if (f & 1) uleb(); };
  while (p < buf.length) {
    const id = buf[p++];
    const len = uleb();
    const end = p + len;
    if (id === 2) {
      for (let n = uleb(); n > 0; n--) {
        for (let s = 0; s < 2; s++) { const l = uleb(); p += l; }
        const kind = buf[p++];
        if (kind === 0) { uleb(); w.imports++; }
        else if (kind === 1) { p++; limits(); }
        else if (kind === 2) limits();
        else if (kind === 3) p += 2;
        else throw new Error(`unsupported import kind ${kind}`);
      }
    } else if (id === 7) {
      for (let n = uleb(); n > 0; n--) {
        const l = uleb();
        const name = buf.subarray(p, p + l).toString();
        p += l;
        const kind = buf[p++];
        w.exports.set(name, {kind, index: uleb()});
      }
    } else if (id === 9) {
      for (let n = uleb(); n > 0; n--) {
        const flags = uleb();
        if (flags !== 0) throw new Error(`unsupported element segment flags ${flags}`);
        const off = offsetExpr();
        for (let c = uleb(), j = 0; j < c; j++) w.table.set(off + j, uleb());
      }
    } else if (id === 11) {
      for (let n = uleb(); n > 0; n--) {
        const flags = uleb();
        let off = null;
        if (flags === 0) off = offsetExpr();
        else if (flags === 2) { uleb(); off = offsetExpr(); }
        const l = uleb();
        if (off !== null) w.segments.push({off, bytes: buf.subarray(p, p + l)});
        p += l;
      }
    }
    p = end;
  }
  return w;
}

// C name -> function index, from the glue's bindings of the module's exports.
function gluedExports(glue, w) {
  const out = new Map();
  for (const m of glue.matchAll(/\b[\w$]+\._(\w+)=(?:[\w$]+\.asm\.|[\w$]+\.)([\w$]+)[);,]/g)) {
    const e = w.exports.get(m[2]);
    if (e && e.kind === 0) out.set(m[1], e.index);
  }
  return out;
}

// SQL function name -> set of implementing function indices (built-in FuncDefs).
function builtinFunctions(w) {
  let size = 0;
  for (const s of w.segments) size = Math.max(size, s.off + s.bytes.length);
  const mem = Buffer.alloc(size);
  for (const s of w.segments) s.bytes.copy(mem, s.off);
  const cstr = (a) => { let e = a; while (e < mem.length && mem[e]) e++; return mem.toString('latin1', a, e); };
  const out = new Map();
  for (let q = 0; q + 40 <= mem.length; q += 4) {
    const zName = mem.readUInt32LE(q + 32);
    if (zName < 1024 || zName >= mem.length) continue;  // may point into a merged string
    const nArg = mem.readInt16LE(q);
    if (nArg < -4 || nArg > 1000) continue;  // -3, -4: concat(), concat_ws() (3.44)
    if ((mem.readUInt32LE(q + 4) & 3) !== 1) continue;  // SQLITE_UTF8 in funcFlags
    if (mem.readUInt32LE(q + 12) !== 0 || mem.readUInt32LE(q + 36) !== 0) continue;
    const name = cstr(zName);
    if (!/^[a-z_][a-z0-9_]{1,40}$/.test(name)) continue;
    const f = w.table.get(mem.readUInt32LE(q + 16));
    if (f === undefined) continue;
    if (!out.has(name)) out.set(name, new Set());
    out.get(name).add(f);
  }
  return out;
}

async function sqliteFacts(dir) {
  const init = (await import(path.join(dir, 'sql-wasm.js'))).default;
  const SQL = await init({locateFile: (f) => path.join(dir, f)});
  const db = new SQL.Database();
  const [[version, sourceId]] = db.exec('SELECT sqlite_version(), sqlite_source_id()')[0].values;
  const options = db.exec('PRAGMA compile_options')[0].values.map((r) => r[0]);
  db.close();
  return {version, sourceId, options};
}

function run(bin, args, cwd) {
  const r = spawnSync(bin, args, {cwd, encoding: 'utf8', maxBuffer: 1 << 30});
  if (r.error) throw new Error(`cannot run ${bin}: ${r.error.message}`);
  if (r.status !== 0) {
    throw new Error(`warden ${args.join(' ')} failed (${r.status}): ${(r.stderr || '').trim()}`);
  }
  return r.stdout;
}

// The stored report (table diffs, report_json) lists the unchanged and moved pairs the --json
// output leaves out: "unchanged_or_moved": [[from_index, to_index, pass], ...].
function storedPairs(dir) {
  const py = 'import json,sqlite3,sys\n' +
      'c=sqlite3.connect(sys.argv[1])\n' +
      'r=c.execute("SELECT report_json FROM diffs ORDER BY id DESC LIMIT 1").fetchone()\n' +
      'print(json.dumps(json.loads(r[0]).get("unchanged_or_moved")))';
  const r = spawnSync('python3', ['-c', py, path.join(dir, '.warden', 'warden.db')],
                      {encoding: 'utf8', maxBuffer: 1 << 28});
  if (r.status !== 0) throw new Error(`reading the stored diff failed: ${(r.stderr || '').trim()}`);
  const pairs = JSON.parse(r.stdout);
  if (!Array.isArray(pairs)) throw new Error('the stored diff has no unchanged_or_moved list');
  return pairs;
}

// The diff as classes per index on each side: from index -> {cls, partner}, to index likewise.
function classify(report, pairs) {
  const from = new Map(), to = new Map();
  for (const c of report.changes) {
    if (c.from_index !== null) from.set(c.from_index, {cls: c.class, partner: c.to_index});
    if (c.to_index !== null) to.set(c.to_index, {cls: c.class, partner: c.from_index});
  }
  for (const [f, t] of pairs) {
    const cls = f === t ? 'unchanged' : 'moved';
    from.set(f, {cls, partner: t});
    to.set(t, {cls, partner: f});
  }
  return {from, to};
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  if (!args) {
    console.error('usage: check.mjs --warden BIN [--modules DIR] [--expect FILE] [--allow-known]');
    return 2;
  }
  const spec = JSON.parse(fs.readFileSync(args.expect, 'utf8'));
  const sides = {from: path.join(args.modules, 'sql.js-1.8.0', 'dist'),
                 to: path.join(args.modules, 'sql.js', 'dist')};
  for (const d of Object.values(sides)) {
    if (!fs.existsSync(path.join(d, 'sql-wasm.wasm'))) {
      console.log(`(skipped: ${d}/sql-wasm.wasm is missing; scripts/setup installs the npm modules)`);
      return 77;
    }
  }
  const t0 = Date.now();
  const facts = {}, wasm = {}, exportsByName = {}, builtins = {};
  for (const [k, d] of Object.entries(sides)) {
    facts[k] = await sqliteFacts(d);
    wasm[k] = readWasm(fs.readFileSync(path.join(d, 'sql-wasm.wasm')));
    exportsByName[k] = gluedExports(fs.readFileSync(path.join(d, 'sql-wasm.js'), 'utf8'), wasm[k]);
    builtins[k] = builtinFunctions(wasm[k]);
  }
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'warden_release_notes.'));
  let report, funcs, pairs;
  try {
    run(args.warden, ['init'], tmp);
    for (const [k, d] of Object.entries(sides)) {
      run(args.warden, ['ingest', path.join(d, 'sql-wasm.wasm'), '--glue',
                        path.join(d, 'sql-wasm.js'), '--label', k], tmp);
    }
    report = JSON.parse(run(args.warden, ['diff', 'from', 'to', '--json'], tmp));
    funcs = {from: JSON.parse(run(args.warden, ['funcs', 'from', '--json'], tmp)),
             to: JSON.parse(run(args.warden, ['funcs', 'to', '--json'], tmp))};
    pairs = storedPairs(tmp);
  } finally {
    fs.rmSync(tmp, {recursive: true, force: true});
  }
  const cls = classify(report, pairs);

  const disagreements = [];  // {key, why}
  const lines = [];
  const say = (s) => lines.push(s);

  // The SQLite version jump, against the modules themselves.
  const sv = spec.sqlite_version;
  const versionOk = facts.from.version === sv.from && facts.to.version === sv.to &&
      facts.from.sourceId !== facts.to.sourceId;
  say(`SQLite ${facts.from.version} -> ${facts.to.version} (expected ${sv.from} -> ${sv.to}): ` +
      (versionOk ? 'agrees' : 'DISAGREES'));
  if (!versionOk) disagreements.push({key: 'sqlite-version', why: 'the modules are other versions'});
  say(`names located: glue-bound exports ${exportsByName.from.size} -> ${exportsByName.to.size}, ` +
      `built-in SQL functions ${builtins.from.size} -> ${builtins.to.size}`);
  const math = (k) => facts[k].options.includes('ENABLE_MATH_FUNCTIONS');
  say(`ENABLE_MATH_FUNCTIONS: 1.8.0 ${math('from') ? 'on' : 'off'}, 1.16.0 ${math('to') ? 'on' : 'off'}`);

  const describe = (k, i) => {
    const c = cls[k].get(i);
    return c ? `${c.cls}${c.partner !== null ? ` (${k === 'from' ? '->' : '<-'} ${c.partner})` : ''}` : 'absent';
  };
  for (const e of spec.expectations) {
    let agree = 0, total = 0, na = 0;
    const wrong = [], outcomes = [];
    const check = (key, ok, detail) => {
      total++;
      if (ok) agree++;
      else { wrong.push(`${key}: ${detail}`); disagreements.push({key: `${e.id}:${key}`, why: detail}); }
    };
    if (e.id === 'exports-in-both') {
      const names = [...exportsByName.from.keys()].filter((n) => exportsByName.to.has(n)).sort();
      for (const n of names) {
        const a = exportsByName.from.get(n), b = exportsByName.to.get(n);
        const c = cls.from.get(a);
        const ok = c && c.partner === b && c.cls !== 'deleted';
        check(n, ok, `1.8.0 func[${a}] ${describe('from', a)}, 1.16.0 func[${b}] ${describe('to', b)}`);
      }
      const onlyFrom = [...exportsByName.from.keys()].filter((n) => !exportsByName.to.has(n));
      say(`${e.id}: ${agree}/${total} exports in both paired with their namesake; ` +
          `bound in 1.8.0's glue only: ${onlyFrom.join(', ') || 'none'}`);
    } else {
      for (const t of e.targets) {
        if (t.export) {
          const i = exportsByName.to.get(t.export);
          if (i === undefined) { na++; wrong.push(`${t.export}: not bound in 1.16.0's glue (n/a)`); continue; }
          if (exportsByName.from.has(t.export)) { na++; wrong.push(`${t.export}: also in 1.8.0 (n/a)`); continue; }
          const c = cls.to.get(i);
          check(t.export, c && c.cls === 'new', `func[${i}] ${describe('to', i)}`);
        } else if (t.sql_function && e.expect === 'new') {
          const impl = builtins.to.get(t.sql_function);
          if (!impl) { na++; wrong.push(`${t.sql_function}(): no FuncDef found in 1.16.0 (n/a)`); continue; }
          if (builtins.from.has(t.sql_function)) { na++; wrong.push(`${t.sql_function}(): also in 1.8.0 (n/a)`); continue; }
          const shared = [...builtins.to].filter(([n, s]) => builtins.from.has(n) && [...impl].some((f) => s.has(f))).map(([n]) => n);
          if (shared.length) { na++; wrong.push(`${t.sql_function}(): implementation shared with ${shared.slice(0, 3).join(', ')} (n/a)`); continue; }
          for (const i of impl) {
            const c = cls.to.get(i);
            check(`${t.sql_function}()`, c && c.cls === 'new', `func[${i}] ${describe('to', i)}`);
          }
        } else if (t.sql_function && e.expect === 'changed') {
          const impl = builtins.from.get(t.sql_function);
          if (!impl) { na++; wrong.push(`${t.sql_function}(): no FuncDef found in 1.8.0 (n/a)`); continue; }
          const toImpl = builtins.to.get(t.sql_function) || new Set();
          for (const i of impl) {
            const c = cls.from.get(i);
            const ok = c && (c.cls === 'modified' || c.cls === 'deleted');
            check(`${t.sql_function}()`, ok, `func[${i}] ${describe('from', i)}`);
            const same = ok && c.cls === 'modified' && toImpl.has(c.partner);
            if (same) e.pairedSame = (e.pairedSame || 0) + 1;
            if (ok) outcomes.push(`${t.sql_function} ${c.cls}${c.cls === 'modified' ? (same ? ' (same name)' : ' (other function)') : ''}`);
          }
        }
      }
      const extra = e.expect === 'changed' ? `; of those, modified and paired with the same name's 1.16.0 implementation: ${e.pairedSame || 0}` : '';
      say(`${e.id}: ${agree}/${total} classified ${e.expect === 'changed' ? 'modified or deleted' : e.expect}` +
          `${na ? ` (${na} not applicable)` : ''}${extra}`);
    }
    if (outcomes.length) say(`    ${outcomes.join(', ')}`);
    for (const w of wrong) say(`    ${w}`);
  }

  const counts = Object.fromEntries(Object.entries(report.counts).map(([k, v]) => [k, v.total]));
  console.log(`warden diff sql.js 1.8.0 -> 1.16.0: ${funcs.from.length} -> ${funcs.to.length} defined functions`);
  console.log(`  counts: unchanged ${counts.unchanged}, moved ${counts.moved}, modified ${counts.modified}, ` +
              `new ${counts.new}, deleted ${counts.deleted}`);
  console.log(`  pairs per pass: ${Object.entries(report.passes).map(([k, v]) => `${k} ${v}`).join(', ')}`);
  for (const l of lines) console.log(`  ${l}`);
  const known = spec.known_disagreements || {};
  const found = new Set(disagreements.map((d) => d.key));
  const unexpected = [...found].filter((k) => !(k in known));
  const stale = Object.keys(known).filter((k) => !found.has(k));
  console.log(`  disagreements: ${found.size} (${Object.keys(known).length} known and explained in ` +
              `${path.basename(args.expect)}); ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  if (!args.allowKnown) return found.size ? 1 : 0;
  for (const k of unexpected) console.log(`  NEW DISAGREEMENT: ${k}`);
  for (const k of stale) console.log(`  NOW AGREES (remove it from known_disagreements): ${k}`);
  return unexpected.length || stale.length ? 1 : 0;
}

main().then((code) => process.exit(code), (err) => {
  console.error(`check.mjs: ${err.message}`);
  process.exit(2);
});
