// Reports people look at (issue 24): `warden report --html` loaded in a real headless browser
// (Debian's chromium, installed by scripts/setup), `kodoc check --sarif` validated against the
// SARIF 2.1.0 JSON schema, and `librarian_eval plot` parsed as XML by the browser.
//
// The browser tests skip, saying why, only when chromium is not installed.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { BUILD_DIR, REPO_ROOT } from './lib/env.mjs';

const require = createRequire(import.meta.url);
const WARDEN = path.join(BUILD_DIR, 'src', 'warden', 'cli', 'warden');
const KODOC = path.join(BUILD_DIR, 'src', 'kodo', 'cli', 'kodoc');
const EVAL = path.join(BUILD_DIR, 'src', 'librarian', 'eval', 'librarian_eval');
const FIXTURES = path.join(REPO_ROOT, 'testdata', 'warden', 'fixtures');

function findChromium() {
  for (const name of ['chromium', 'chromium-browser', 'google-chrome']) {
    const r = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
    if (r.status === 0 && r.stdout.trim()) return r.stdout.trim();
  }
  return null;
}
const CHROMIUM = findChromium();
const NO_BROWSER = CHROMIUM ? false : 'chromium is not installed (scripts/setup installs it)';
if (NO_BROWSER) console.log(`# skipping the browser tests: ${NO_BROWSER}`);

let dir;
before(() => { dir = mkdtempSync(path.join(os.tmpdir(), 'trove-reports-')); });
after(() => { if (dir) rmSync(dir, { recursive: true, force: true }); });

function run(bin, args, opts = {}) {
  const r = spawnSync(bin, args, { encoding: 'utf8', timeout: 120000, ...opts });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

// Loads `file` in headless chromium and returns the DOM after its scripts ran.
function dumpDom(file) {
  const profile = mkdtempSync(path.join(dir, 'chromium-'));
  const r = spawnSync(CHROMIUM, ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
    `--user-data-dir=${profile}`, '--dump-dom', pathToFileURL(file).href],
  { encoding: 'utf8', timeout: 120000, maxBuffer: 64 * 1024 * 1024 });
  assert.equal(r.status, 0, `chromium failed: ${r.stderr}`);
  return r.stdout;
}

// Takes a screenshot of `file` in headless chromium (--screenshot, as a user's browser would
// paint it) and returns {png, console}: the PNG's bytes and the console lines chromium logged,
// where an uncaught script error shows as `CONSOLE ... "Uncaught ..."`.
function screenshot(file) {
  const profile = mkdtempSync(path.join(dir, 'chromium-'));
  const png = path.join(profile, 'page.png');
  const r = spawnSync(CHROMIUM, ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
    `--user-data-dir=${profile}`, '--enable-logging=stderr', '--v=0', '--window-size=1200,1600',
    `--screenshot=${png}`, pathToFileURL(file).href],
  { encoding: 'utf8', timeout: 120000, maxBuffer: 64 * 1024 * 1024 });
  assert.equal(r.status, 0, `chromium failed: ${r.stderr}`);
  return { png: readFileSync(png), console: r.stderr.split('\n').filter((l) => l.includes(':CONSOLE')) };
}

// --- A hostile module, byte by byte: its name section names func 1 with markup and script ---
const uleb = (n) => { const out = []; do { let b = n & 0x7f; n >>>= 7; if (n) b |= 0x80; out.push(b); } while (n); return out; };
const name = (s) => { const b = [...Buffer.from(s, 'utf8')]; return [...uleb(b.length), ...b]; };
const vec = (items) => [...uleb(items.length), ...items.flat()];
const section = (id, body) => [id, ...uleb(body.length), ...body];
const sized = (b) => [...uleb(b.length), ...b];
const HOSTILE = '"><img id="pwned" src="x" onerror="document.title=\'pwned\'"><script>document.body.setAttribute(\'data-pwned\',\'1\')</script>';
const HOSTILE_EXPORT = "</td><b id='pwned-export'>x</b>";
function hostileModule() {
  const types = vec([[0x60, 0x00, 0x00]]);
  const funcs = vec([[0], [0]]);
  const exports = vec([[...name(HOSTILE_EXPORT), 0x00, 0]]);
  const code = vec([[0x00, 0x0b], [0x00, 0x10, 0x00, 0x0b]].map(sized));
  const names = [...name('name'), 0x01, ...sized(vec([[...uleb(1), ...name(HOSTILE)]]))];
  return Buffer.from([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, ...section(1, types),
    ...section(3, funcs), ...section(7, exports), ...section(10, code), ...section(0, names)]);
}

describe('warden report --html', () => {
  let db;
  let html1;
  let html2;
  before(() => {
    assert.ok(existsSync(WARDEN), `warden binary not found: ${WARDEN}`);
    db = path.join(dir, 'kb.db');
    const wasm = path.join(dir, 'app-O2.wasm');
    const glue = path.join(dir, 'app-O2.js');
    copyFileSync(path.join(FIXTURES, 'app-O2.wasm'), wasm);
    copyFileSync(path.join(FIXTURES, 'app-O2.js'), glue);
    let r = run(WARDEN, ['ingest', wasm, '--glue', glue, '--db', db, '--label', 'v1']);
    assert.equal(r.code, 0, r.stderr);
    const hostile = path.join(dir, 'hostile.wasm');
    writeFileSync(hostile, hostileModule());
    r = run(WARDEN, ['ingest', hostile, '--db', db, '--label', 'v2']);
    assert.equal(r.code, 0, r.stderr);
    // A human name with markup too, through the CLI's own write path.
    r = run(WARDEN, ['set-name', '0', '<i id="pwned-human">x</i>', '--version', 'v2', '--db', db]);
    assert.equal(r.code, 0, r.stderr);
    html1 = path.join(dir, 'v1.html');
    html2 = path.join(dir, 'v2.html');
    r = run(WARDEN, ['report', 'v1', '--html', html1, '--db', db]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^wrote the report of v1 \(/);
    r = run(WARDEN, ['report', '--html', html2, '--db', db, '--json']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).label, 'v2', 'the latest version by default');
  });

  test('writes atomically: no temporary file is left, a bad path changes nothing', () => {
    const r = run(WARDEN, ['report', 'v1', '--html', path.join(dir, 'no-such-dir', 'r.html'), '--db', db]);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /^warden: error: cannot write /);
    const leftovers = spawnSync('sh', ['-c', `ls -a ${dir} | grep -v -e '^v[12].html$' -e '^chromium-' || true`], { encoding: 'utf8' }).stdout;
    assert.doesNotMatch(leftovers, /\.html\./, 'a temporary file was left behind');
    assert.equal(run(WARDEN, ['report', 'v9', '--html', path.join(dir, 'x.html'), '--db', db]).code, 6);
    assert.ok(!existsSync(path.join(dir, 'x.html')));
  });

  test('renders in chromium with its script run, the chart, the table and the counts', { skip: NO_BROWSER }, () => {
    const coverage = JSON.parse(run(WARDEN, ['coverage', 'v1', '--db', db, '--json']).stdout);
    const funcs = JSON.parse(run(WARDEN, ['funcs', 'v1', '--db', db, '--json']).stdout);
    const dom = dumpDom(html1);
    assert.match(dom, /<body[^>]* data-ready="true"/, 'the page script did not run to its end');
    assert.match(dom, /<svg id="coverage-chart"/);
    assert.equal((dom.match(/<g class="bar"/g) || []).length, 2, 'one bar per version');
    assert.match(dom, /<g class="bar" data-version="v1" data-selected="true">/);
    assert.equal((dom.match(/<tr class="fn"/g) || []).length, coverage.defined, 'one row per defined function');
    assert.match(dom, new RegExp(`id="cov-defined" data-value="${coverage.defined}"`));
    assert.match(dom, new RegExp(`id="cov-named" data-value="${coverage.named}"`));
    assert.match(dom, new RegExp(`<span id="shown-count">${coverage.defined}</span>`), 'the filter counted the rows');
    const named = funcs.find((f) => f.name && /^[A-Za-z_][A-Za-z0-9_]*$/.test(f.name));
    assert.ok(named, 'the fixture has a plainly named function');
    assert.match(dom, new RegExp(`data-name="${named.name}"`), `${named.name} is listed`);
    assert.match(dom, /<details><summary>facts and evidence<\/summary>/);
    assert.match(dom, /ingest:(glue|export|name-section)/, 'the evidence trail is shown');
  });

  test('paints in chromium --screenshot without a script error', { skip: NO_BROWSER }, () => {
    for (const page of [html1, html2]) {
      const shot = screenshot(page);
      assert.deepEqual([...shot.png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'not a PNG');
      assert.ok(shot.png.length > 10000, `a ${shot.png.length}-byte screenshot is too small to show the page`);
      assert.deepEqual(shot.console.filter((l) => /Uncaught|Error/.test(l)), [], 'script errors while painting');
    }
  });

  test('a hostile module and a hostile human name inject nothing', { skip: NO_BROWSER }, () => {
    const raw = readFileSync(html2, 'utf8');
    assert.equal((raw.match(/<script/g) || []).length, 1, 'only the page script');
    const dom = dumpDom(html2);
    assert.match(dom, /<body[^>]* data-ready="true"/);
    assert.doesNotMatch(dom, /<body[^>]*data-pwned/, 'the injected script ran');
    assert.doesNotMatch(dom, /<title>pwned/);
    for (const id of ['pwned', 'pwned-export', 'pwned-human']) {
      assert.doesNotMatch(dom, new RegExp(`<[a-z]+ id="${id}"`), `an element ${id} was injected`);
    }
    // The names are there, as text.
    assert.match(dom, /&lt;img id="pwned"/);
    assert.match(dom, /&lt;\/td&gt;&lt;b id='pwned-export'&gt;x&lt;\/b&gt;/);
    assert.match(dom, /&lt;i id="pwned-human"&gt;x&lt;\/i&gt;/);
    // The version's own figures.
    assert.equal((dom.match(/<tr class="fn"/g) || []).length, 2);
    assert.match(dom, /<span id="import-count">0<\/span>/);
    assert.match(dom, /<span id="export-count">1<\/span>/);
  });
});

describe('kodoc check --sarif', () => {
  const source = [
    'module broken {',
    '    meta { purpose: "sarif" }',
    '    fn main() -> Int {',
    '        let x: Int = undefined_name',
    '        return true',
    '    }',
    '}',
    '',
  ].join('\n');

  function validator() {
    const Ajv = require('ajv').default;
    const addFormats = require('ajv-formats').default;
    const schema = JSON.parse(readFileSync(path.join(REPO_ROOT, 'e2e', 'testdata', 'sarif-2.1.0-rtm.5.json'), 'utf8'));
    // Shipped as draft-04 ("id"); read as draft-07, which ajv 8 implements (see the .SOURCE note).
    delete schema.$schema;
    schema.$id = schema.id;
    delete schema.id;
    // unicodeRegExp: false, because rtm.5's `language` pattern has a stray ']' that only a
    // non-Unicode RegExp accepts (an erratum fixed in rtm.6).
    const ajv = new Ajv({ strict: false, allErrors: true, unicodeRegExp: false });
    addFormats(ajv);
    return ajv.compile(schema);
  }

  test('validates against the SARIF 2.1.0 schema and carries code, level, region and fix', () => {
    assert.ok(existsSync(KODOC), `kodoc binary not found: ${KODOC}`);
    const file = path.join(dir, 'broken file.ko');
    writeFileSync(file, source);
    const r = run(KODOC, ['check', 'broken file.ko', '--sarif'], { cwd: dir });
    assert.equal(r.code, 1, r.stderr);
    const log = JSON.parse(r.stdout);
    const validate = validator();
    assert.ok(validate(log), JSON.stringify(validate.errors, null, 2));
    // The same diagnostics as --json-errors.
    const env = JSON.parse(run(KODOC, ['check', 'broken file.ko', '--json-errors'], { cwd: dir }).stdout);
    const results = log.runs[0].results;
    assert.equal(results.length, env.errors.length);
    assert.ok(results.length >= 1);
    const driver = log.runs[0].tool.driver;
    assert.equal(driver.name, 'kodoc');
    assert.match(driver.version, /^\d+\.\d+\.\d+$/);
    results.forEach((res, i) => {
      const e = env.errors[i];
      assert.equal(res.ruleId, e.code);
      assert.equal(driver.rules[res.ruleIndex].id, e.code);
      assert.equal(res.level, 'error');
      assert.equal(res.message.text, e.message);
      const loc = res.locations[0].physicalLocation;
      assert.equal(loc.artifactLocation.uri, 'broken%20file.ko');
      if (e.span) {
        assert.equal(loc.region.startLine, e.span.line);
        assert.equal(loc.region.startColumn, e.span.column);
        assert.equal(loc.region.byteOffset, e.span.start);
        assert.equal(loc.region.byteLength, e.span.end - e.span.start);
      }
      if (e.fix_patch) {
        const rep = res.fixes[0].artifactChanges[0].replacements[0];
        assert.equal(rep.deletedRegion.byteOffset, e.fix_patch.start_offset);
        assert.equal(rep.insertedContent.text, e.fix_patch.replacement);
      } else {
        assert.equal(res.fixes, undefined);
      }
    });
    // A clean program: a valid log with no results, exit 0.
    writeFileSync(path.join(dir, 'ok.ko'), 'module ok {\n    meta { purpose: "ok" }\n    fn main() -> Int {\n        return 1\n    }\n}\n');
    const ok = run(KODOC, ['check', 'ok.ko', '--sarif'], { cwd: dir });
    assert.equal(ok.code, 0, ok.stderr);
    const clean = JSON.parse(ok.stdout);
    assert.ok(validate(clean), JSON.stringify(validate.errors));
    assert.deepEqual(clean.runs[0].results, []);
  });

  test('the schema check itself rejects a broken log', () => {
    const validate = validator();
    assert.equal(validate({ version: '2.1.0', runs: [{ tool: { driver: {} } }] }), false, 'driver.name is required');
    assert.equal(validate({ version: '2.1.0', runs: [{ tool: { driver: { name: 'x' } }, results: [{ message: { text: 'm' }, level: 'fatal' }] }] }), false);
    const zeroLine = { version: '2.1.0', runs: [{ tool: { driver: { name: 'x' } }, results: [{ message: { text: 'm' }, locations: [{ physicalLocation: { artifactLocation: { uri: 'a.ko' }, region: { startLine: 0 } } }] }] }] };
    assert.equal(validate(zeroLine), false, 'lines are 1-based');
  });
});

describe('librarian_eval plot', () => {
  test('draws well-formed SVG from the figures, escaping names', { skip: NO_BROWSER }, () => {
    assert.ok(existsSync(EVAL), `librarian_eval binary not found: ${EVAL}`);
    const interval = (mean) => ({ mean, low: Math.max(0, mean - 0.1), high: Math.min(1, mean + 0.1), n: 8 });
    const figures = { repos: ['ws', '<evil & "repo">', 'all'].map((repo, i) => ({
      repo,
      systems: [
        { system: 'baseline', mrr: interval(0.4), ndcg: interval(0.5), function_mrr: interval(0.3), mrr_ratio: 1 },
        { system: 'librarian', mrr: interval(0.6 + i / 10), ndcg: interval(0.7), function_mrr: interval(0.5), mrr_ratio: (0.6 + i / 10) / 0.4 },
      ],
    })) };
    const json = path.join(dir, 'figures.json');
    const svg = path.join(dir, 'plot.svg');
    writeFileSync(json, JSON.stringify(figures));
    const r = run(EVAL, ['plot', '--figures', json, '--svg', svg, '--title', 'eval </title> & more']);
    assert.equal(r.code, 0, r.stderr);
    const dom = dumpDom(svg);
    assert.doesNotMatch(dom, /parsererror|This page contains the following errors/, 'chromium could not parse the SVG');
    assert.match(dom, /<g id="panel-mrr">/);
    assert.match(dom, /<g id="panel-ratio">/);
    assert.equal((dom.match(/class="bar"/g) || []).length, 18);
    assert.match(dom, /data-repo="&lt;evil &amp; &quot;repo&quot;&gt;"/);
    assert.match(dom, /data-system="librarian" data-value="1.7500"/);
    const bad = run(EVAL, ['plot', '--figures', svg, '--svg', path.join(dir, 'x.svg')]);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /^librarian_eval: error: /);
  });
});
