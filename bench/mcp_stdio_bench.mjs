#!/usr/bin/env node
// MCP stdio benchmark harness (docs/mcp.md §7.1, §7.3, §7.4).
//
// Spawns each server directly (no shell), a fresh process per run, runs interleaved run by run
// across any number of servers, and for every run measures:
//   start → parsed initialize response; idle RSS (VmRSS) 300 ms after the handshake and tools/list;
//   500 warm-up calls; a sequential phase (req/s, p50/p90/p99/max); a pipelined phase with W
//   outstanding (req/s, p50/p99/max including queueing); server CPU per call per phase from
//   utime+stime in /proc/<pid>/stat (plus a nanosecond figure summed over /proc/<pid>/task/*/schedstat);
//   the harness's own CPU per call per phase; peak RSS (VmHWM) at the end; child processes.
// Every message is validated strictly (docs/mcp.md §7.4); any violation fails the run and the exit
// status.
// Shutdown follows the spec: close stdin, 3 s, SIGTERM, 2 s, SIGKILL; a server that needed a signal
// is flagged.
//
// Usage:
//   node bench/mcp_stdio_bench.mjs [options] --server NAME=CMD [ARG...] [--server NAME=CMD [ARG...]]...
// A server's arguments run up to the next harness option (any token listed below); an argument
// that collides with a harness option can be passed with --arg VALUE right after the server.
//
// Options (defaults from docs/mcp.md §7.1):
//   --runs N                 runs per server, interleaved (7)
//   --calls N                calls per measured phase (10000)
//   --window W               outstanding requests in the pipelined phase (32)
//   --warmup N               warm-up calls, sequential, before the phases (500)
//   --phases LIST            comma list of sequential,pipelined (both, in that order)
//   --idle-wait-ms MS        wait after tools/list before reading idle RSS (300)
//   --timeout-ms MS          per-phase timeout; missing responses then fail the run (60000)
//   --handshake-timeout-ms MS  timeout for initialize and each tools/list page (30000)
//   --no-rotate              always run servers in command-line order (default rotates the
//                            starting server each run so no server always goes first)
//   --allow-is-error         do not fail on isError: true (docs/mcp.md §7.4 "unless explicitly
// allowed")
//   --fail-fast              stop at the first failed run
//   --meta KEY=VALUE         extra machine/build description for the JSON (repeatable),
//                            e.g. compiler, build_type, git_commit
//   --stderr-dir DIR         keep each server's stderr as DIR/<server>-run<N>.log (default: a temp
//                            dir, removed when every run passed)
//   --json FILE              write the full results as JSON
//   --quiet                  no per-run progress lines on stderr
// Exit status: 0 all runs valid; 1 some run failed validation; 2 usage or setup error.

import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';

const HARNESS_NAME = 'trove-mcp-stdio-bench';
const HARNESS_VERSION = '1.0.0';
const PROTOCOL_VERSION = '2025-11-25';
const TOOL_NAME = 'echo';
const ECHO_TEXT = 'hello';
const ARGS_JSON = JSON.stringify({ text: ECHO_TEXT });
const MAX_LINE_BYTES = 64 << 20; // a stdout line longer than this without '\n' fails the run
const now = () => performance.now();
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// ------------------------------------------------------------------------------------------------
// Command line

const VALUE_OPTS = new Set(['--runs', '--calls', '--window', '--warmup', '--phases', '--idle-wait-ms',
  '--timeout-ms', '--handshake-timeout-ms', '--meta', '--stderr-dir', '--json']);
const FLAG_OPTS = new Set(['--no-rotate', '--allow-is-error', '--fail-fast', '--quiet', '--help', '-h']);
const isHarnessOpt = (t) => VALUE_OPTS.has(t) || FLAG_OPTS.has(t) || t === '--server';

class UsageError extends Error {}

function parseArgs(argv) {
  const o = {
    runs: 7, calls: 10000, window: 32, warmup: 500, phases: ['sequential', 'pipelined'],
    idleWaitMs: 300, timeoutMs: 60000, handshakeTimeoutMs: 30000, rotate: true, allowIsError: false,
    failFast: false, meta: {}, stderrDir: null, json: null, quiet: false, servers: [],
  };
  const int = (name, v, min) => {
    if (!/^[0-9]+$/.test(v ?? '') || Number(v) < min) throw new UsageError(`${name} needs an integer ≥ ${min}`);
    return Number(v);
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--server') {
      const spec = argv[++i];
      if (!spec) throw new UsageError('--server needs NAME=CMD');
      const eq = spec.indexOf('=');
      const name = eq > 0 ? spec.slice(0, eq) : path.basename(spec);
      const cmd = eq > 0 ? spec.slice(eq + 1) : spec;
      if (!cmd) throw new UsageError(`--server ${spec}: empty command`);
      const args = [];
      while (i + 1 < argv.length) {
        if (argv[i + 1] === '--arg') {
          if (i + 2 >= argv.length) throw new UsageError('--arg needs a value');
          args.push(argv[i + 2]);
          i += 2;
        } else if (isHarnessOpt(argv[i + 1])) {
          break;
        } else {
          args.push(argv[++i]);
        }
      }
      o.servers.push({ name, cmd, args });
      continue;
    }
    if (FLAG_OPTS.has(a)) {
      if (a === '--help' || a === '-h') o.help = true;
      else if (a === '--no-rotate') o.rotate = false;
      else if (a === '--allow-is-error') o.allowIsError = true;
      else if (a === '--fail-fast') o.failFast = true;
      else if (a === '--quiet') o.quiet = true;
      continue;
    }
    if (!VALUE_OPTS.has(a)) throw new UsageError(`unknown argument: ${a}`);
    const v = argv[++i];
    if (v === undefined) throw new UsageError(`${a} needs a value`);
    switch (a) {
      case '--runs': o.runs = int(a, v, 1); break;
      case '--calls': o.calls = int(a, v, 1); break;
      case '--window': o.window = int(a, v, 1); break;
      case '--warmup': o.warmup = int(a, v, 0); break;
      case '--idle-wait-ms': o.idleWaitMs = int(a, v, 0); break;
      case '--timeout-ms': o.timeoutMs = int(a, v, 1); break;
      case '--handshake-timeout-ms': o.handshakeTimeoutMs = int(a, v, 1); break;
      case '--stderr-dir': o.stderrDir = v; break;
      case '--json': o.json = v; break;
      case '--phases': {
        o.phases = v.split(',').map((s) => s.trim()).filter(Boolean);
        const bad = o.phases.filter((p) => p !== 'sequential' && p !== 'pipelined');
        if (bad.length || !o.phases.length || new Set(o.phases).size !== o.phases.length) {
          throw new UsageError('--phases takes a comma list of sequential,pipelined');
        }
        break;
      }
      case '--meta': {
        const eq = v.indexOf('=');
        if (eq <= 0) throw new UsageError('--meta needs KEY=VALUE');
        o.meta[v.slice(0, eq)] = v.slice(eq + 1);
        break;
      }
      default: throw new UsageError(`unhandled option ${a}`);
    }
  }
  if (o.help) return o;
  if (!o.servers.length) throw new UsageError('no --server given');
  const names = new Set();
  for (const s of o.servers) {
    if (names.has(s.name)) throw new UsageError(`duplicate server name ${s.name}`);
    names.add(s.name);
  }
  return o;
}

function usage() {
  const text = fs.readFileSync(new URL(import.meta.url), 'utf8');
  const lines = text.split('\n');
  const start = lines.findIndex((l) => l.startsWith('// Usage:'));
  const end = lines.findIndex((l, i) => i > start && !l.startsWith('//'));
  return lines.slice(start, end).map((l) => l.replace(/^\/\/ ?/, '')).join('\n');
}

// ------------------------------------------------------------------------------------------------
// /proc readers

function readStatus(pid) {
  const out = {};
  try {
    const text = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    for (const line of text.split('\n')) {
      const m = /^(VmRSS|VmHWM|Threads):\s+([0-9]+)/.exec(line);
      if (m) out[m[1]] = Number(m[2]);
    }
  } catch { /* process gone */ }
  return out;
}

// Fields after the parenthesised comm (which may contain spaces): [0]=state, [1]=ppid, ...,
// [11]=utime, [12]=stime, [13]=cutime, [14]=cstime (fields 14..17 of proc(5)).
function statFields(pid) {
  const text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const close = text.lastIndexOf(')');
  return { comm: text.slice(text.indexOf('(') + 1, close), f: text.slice(close + 2).split(' ') };
}

function readCpu(pid) {
  try {
    const { f } = statFields(pid);
    const ticks = Number(f[11]) + Number(f[12]);
    const childTicks = Number(f[13]) + Number(f[14]);
    let schedNs = 0;
    let schedOk = true;
    try {
      for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
        try {
          schedNs += Number(fs.readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
        } catch { /* thread exited between readdir and read */ }
      }
    } catch { schedOk = false; }
    return { ticks, childTicks, schedNs: schedOk ? schedNs : null };
  } catch {
    return null;
  }
}

function listChildren(pid) {
  const out = [];
  let entries;
  try { entries = fs.readdirSync('/proc'); } catch { return out; }
  for (const e of entries) {
    if (e.charCodeAt(0) < 48 || e.charCodeAt(0) > 57) continue;
    try {
      const { comm, f } = statFields(e);
      if (Number(f[1]) === pid) out.push({ pid: Number(e), comm });
    } catch { /* gone */ }
  }
  return out;
}

let clkTckCache = null;
function clkTck() {
  if (clkTckCache === null) {
    try {
      clkTckCache = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clkTckCache = 100;
    }
  }
  return clkTckCache;
}

// ------------------------------------------------------------------------------------------------
// Raw id text: JSON.parse maps 5, 5.0 and 5e0 to the same number, so the id token is checked on the
// raw line. Fast paths cover the usual compact layouts; anything else goes through a scanner of the
// top-level object.

function skipWs(s, i) {
  for (;;) {
    const c = s.charCodeAt(i);
    if (c === 32 || c === 9 || c === 10 || c === 13) i++;
    else return i;
  }
}

function skipString(s, i) { // s[i] === '"'; returns index past the closing quote
  for (;;) {
    const q = s.indexOf('"', i + 1);
    if (q < 0) return s.length;
    let b = q - 1;
    while (s.charCodeAt(b) === 92) b--;
    if ((q - 1 - b) % 2 === 0) return q + 1;
    i = q;
  }
}

function skipValue(s, i) {
  const c = s.charCodeAt(i);
  if (c === 34) return skipString(s, i);
  if (c === 123 || c === 91) {
    let depth = 0;
    for (; i < s.length; i++) {
      const d = s.charCodeAt(i);
      if (d === 34) { i = skipString(s, i) - 1; continue; }
      if (d === 123 || d === 91) depth++;
      else if (d === 125 || d === 93) { if (--depth === 0) return i + 1; }
    }
    return s.length;
  }
  while (i < s.length) {
    const d = s.charCodeAt(i);
    if (d === 44 || d === 125 || d === 93 || d === 32 || d === 9 || d === 10 || d === 13) break;
    i++;
  }
  return i;
}

// Raw text of the top-level "id" member of a line already known to parse as a JSON object.
function topLevelRawId(s) {
  let i = skipWs(s, 0) + 1;
  for (;;) {
    i = skipWs(s, i);
    if (s.charCodeAt(i) !== 34) return undefined;
    const ke = skipString(s, i);
    const rawKey = s.slice(i, ke);
    const key = rawKey.includes('\\') ? JSON.parse(rawKey) : rawKey.slice(1, -1);
    i = skipWs(s, ke) + 1; // past ':'
    const vs = skipWs(s, i);
    const ve = skipValue(s, vs);
    if (key === 'id') return s.slice(vs, ve);
    i = skipWs(s, ve);
    if (s.charCodeAt(i) !== 44) return undefined;
    i++;
  }
}

function rawIdIs(line, expected) {
  const n = expected.length;
  // ...,"id":N}  at the very end: the final '}' closes the top-level object.
  if (line.charCodeAt(line.length - 1) === 125 && line.endsWith(expected, line.length - 1) &&
      line.endsWith(',"id":', line.length - 1 - n)) return true;
  // {"jsonrpc":"2.0","id":N,  or  {"id":N,
  for (const prefix of ['{"jsonrpc":"2.0","id":', '{"id":']) {
    if (line.startsWith(prefix) && line.startsWith(expected, prefix.length)) {
      const c = line.charCodeAt(prefix.length + n);
      if (c === 44 || c === 125) return true;
    }
  }
  return topLevelRawId(line) === expected;
}

const clip = (s, n = 200) => (s.length > n ? `${s.slice(0, n)}… (${s.length} chars)` : s);

// ------------------------------------------------------------------------------------------------
// One server process, one run

class ValidationError extends Error {}

function describeExit(code, signal) {
  return signal ? `signal ${signal}` : `exit code ${code}`;
}

// A measured (or warm-up) phase: `calls` echo calls with at most `window` outstanding. Request ids
// are base .. base+calls-1, so id → slot is a subtraction and state lives in typed arrays.
class Phase {
  constructor(session, name, calls, window) {
    this.session = session;
    this.name = name;
    this.calls = calls;
    this.window = window;
    this.base = session.nextId;
    session.nextId += calls;
    this.sendT = new Float64Array(calls);
    this.lat = new Float64Array(calls);
    this.state = new Uint8Array(calls); // 0 not sent, 1 awaited, 2 answered
    this.sent = 0;
    this.done = 0;
    this.stamped = 0; // requests [stamped, sent) are queued but not yet written
    this.tEnd = 0;
    this.resolve = null;
  }

  fill() {
    const s = this.session;
    while (this.sent - this.done < this.window && this.sent < this.calls) {
      s.outQueue += `{"jsonrpc":"2.0","id":${this.base + this.sent},"method":"tools/call","params":{"name":"${TOOL_NAME}","arguments":${ARGS_JSON}}}\n`;
      this.state[this.sent++] = 1;
    }
  }

  stamp(t) {
    for (let i = this.stamped; i < this.sent; i++) this.sendT[i] = t;
    this.stamped = this.sent;
  }

  onResponse(slot, id, result, t) {
    const s = this.session;
    if (slot >= this.sent) return s.fail(`response for id ${id}, which was never sent`);
    if (this.state[slot] !== 1) return s.fail(`duplicate response for id ${id} (${this.name} phase)`);
    const problem = s.checkToolResult(result);
    if (problem) return s.fail(`tools/call id ${id}: ${problem}`);
    this.state[slot] = 2;
    this.lat[slot] = t - this.sendT[slot];
    if (++this.done === this.calls) {
      this.tEnd = t;
      const r = this.resolve;
      this.resolve = null;
      if (r) r();
    } else {
      this.fill();
    }
  }
}

class Session {
  constructor(server, opts, stderrPath) {
    this.server = server;
    this.opts = opts;
    this.stderrPath = stderrPath;
    this.child = null;
    this.pid = 0;
    this.buf = '';
    this.outQueue = '';
    this.nextId = 1;
    this.control = new Map(); // id -> {method, resolve}
    this.phase = null;
    this.failure = null;
    this.rejecters = new Set();
    this.stdinClosed = false;
    this.exit = null; // {code, signal, t}
    this.exitWaiters = [];
    this.stdoutClosed = false;
    this.stdoutWaiters = [];
    this.outputSchema = false;
    this.serverRequests = { ping: 0, other: 0, otherMethods: {} };
    this.serverNotifications = {};
    this.allowIsError = opts.allowIsError;
    this.onData = this.onData.bind(this);
  }

  // First failure wins; every pending wait is rejected so the run unwinds to shutdown.
  fail(reason) {
    if (!this.failure) this.failure = reason;
    for (const reject of this.rejecters) reject(new ValidationError(this.failure));
    this.rejecters.clear();
  }

  // Promise that settles through `arm(resolve)` or rejects on failure/timeout.
  wait(ms, what, arm) {
    if (this.failure) return Promise.reject(new ValidationError(this.failure));
    return new Promise((resolve, reject) => {
      let timer = null;
      const rejecter = (e) => { clearTimeout(timer); reject(e); };
      this.rejecters.add(rejecter);
      timer = setTimeout(() => this.fail(`timeout after ${ms} ms: ${what()}`), ms);
      arm((v) => {
        clearTimeout(timer);
        this.rejecters.delete(rejecter);
        resolve(v);
      });
    });
  }

  spawn() {
    const fd = fs.openSync(this.stderrPath, 'w');
    this.t0 = now();
    try {
      this.child = spawn(this.server.cmd, this.server.args, { stdio: ['pipe', 'pipe', fd] });
    } finally {
      fs.closeSync(fd);
    }
    live.add(this.child);
    this.pid = this.child.pid ?? 0;
    this.child.on('error', (e) => this.fail(`spawn/process error: ${e.message}`));
    this.child.on('exit', (code, signal) => {
      this.exit = { code, signal, t: now() };
      live.delete(this.child);
      if (!this.stdinClosed) this.fail(`server exited before stdin was closed (${describeExit(code, signal)})`);
      for (const w of this.exitWaiters.splice(0)) w();
    });
    this.child.stdin.on('error', (e) => {
      if (!this.stdinClosed) this.fail(`writing to the server's stdin failed: ${e.code || e.message}`);
    });
    this.child.stdout.setEncoding('utf8');
    this.child.stdout.on('data', this.onData);
    this.child.stdout.on('close', () => {
      this.stdoutClosed = true;
      if (this.buf.length) this.fail(`stdout ended with an unterminated line: ${clip(this.buf)}`);
      for (const w of this.stdoutWaiters.splice(0)) w();
    });
    if (!this.pid) this.fail(`could not spawn ${this.server.cmd}`);
  }

  write(text) {
    if (!this.stdinClosed) this.child.stdin.write(text);
  }

  flush() {
    if (!this.outQueue) return;
    if (this.phase) this.phase.stamp(now());
    const text = this.outQueue;
    this.outQueue = '';
    this.write(text);
  }

  onData(chunk) {
    const t = now();
    const buf = this.buf.length ? this.buf + chunk : chunk;
    let start = 0;
    let nl;
    while ((nl = buf.indexOf('\n', start)) !== -1) {
      this.onLine(buf.slice(start, nl), t);
      start = nl + 1;
    }
    this.buf = start === 0 ? buf : buf.slice(start);
    if (this.buf.length > MAX_LINE_BYTES) {
      this.fail(`stdout line longer than ${MAX_LINE_BYTES} bytes without a newline`);
      this.buf = '';
    }
    this.flush();
  }

  onLine(line, t) {
    let msg;
    try {
      msg = JSON.parse(line);
    } catch {
      return this.fail(`non-JSON line on stdout: ${JSON.stringify(clip(line))}`);
    }
    if (typeof msg !== 'object' || msg === null) return this.fail(`non-JSON-RPC line on stdout: ${clip(line)}`);
    if (Array.isArray(msg)) return this.fail(`batch array on stdout: ${clip(line)}`);
    if (msg.jsonrpc !== '2.0') return this.fail(`message without "jsonrpc":"2.0": ${clip(line)}`);
    if (msg.method !== undefined) return this.onServerMessage(msg, line);

    const hasResult = msg.result !== undefined;
    if (hasResult === (msg.error !== undefined)) {
      return this.fail(`response with ${hasResult ? 'both' : 'neither'} result and error: ${clip(line)}`);
    }
    const id = msg.id;
    if (id === undefined) return this.fail(`response without id: ${clip(line)}`);
    if (typeof id === 'string' && /^[0-9]+$/.test(id) && Number(id) < this.nextId) {
      return this.fail(`response id ${JSON.stringify(id)} is a string; the harness sent the integer ${id}`);
    }
    if (typeof id !== 'number' || !Number.isInteger(id) || id < 1) {
      return this.fail(`response id ${JSON.stringify(id)} was never sent (the harness sends positive integers): ${clip(line)}`);
    }
    const expected = String(id);
    if (!rawIdIs(line, expected)) {
      return this.fail(`response id token ${topLevelRawId(line)} is not the integer ${expected} that was sent`);
    }
    if (!hasResult) {
      const e = msg.error;
      return this.fail(`JSON-RPC error for id ${id}: ${e && typeof e === 'object' ? `${e.code} ${JSON.stringify(e.message)}` : JSON.stringify(e)}`);
    }
    const p = this.phase;
    if (p !== null && id >= p.base && id < p.base + p.calls) return p.onResponse(id - p.base, id, msg.result, t);
    const c = this.control.get(id);
    if (c) {
      this.control.delete(id);
      return c.resolve({ result: msg.result, t: now() });
    }
    if (id < this.nextId) return this.fail(`late or duplicate response for id ${id} (no longer awaited)`);
    return this.fail(`response for id ${id}, which was never sent`);
  }

  onServerMessage(msg, line) {
    const method = msg.method;
    if (typeof method !== 'string') return this.fail(`method is not a string: ${clip(line)}`);
    if (msg.result !== undefined || msg.error !== undefined) {
      return this.fail(`request/notification carries result or error: ${clip(line)}`);
    }
    if (msg.params !== undefined && (typeof msg.params !== 'object' || msg.params === null || Array.isArray(msg.params))) {
      return this.fail(`params is not an object: ${clip(line)}`);
    }
    if (msg.id === undefined) {
      this.serverNotifications[method] = (this.serverNotifications[method] || 0) + 1;
      return undefined;
    }
    const id = msg.id;
    if (typeof id !== 'string' && !(typeof id === 'number' && Number.isInteger(id))) {
      return this.fail(`server request id ${JSON.stringify(id)} is neither a string nor an integer`);
    }
    const raw = topLevelRawId(line) ?? JSON.stringify(id); // echo the id token exactly
    if (method === 'ping') {
      this.serverRequests.ping++;
      this.outQueue += `{"jsonrpc":"2.0","id":${raw},"result":{}}\n`;
    } else {
      this.serverRequests.other++;
      this.serverRequests.otherMethods[method] = (this.serverRequests.otherMethods[method] || 0) + 1;
      this.outQueue += `{"jsonrpc":"2.0","id":${raw},"error":{"code":-32601,"message":"Method not found"}}\n`;
    }
    return undefined;
  }

  checkToolResult(r) {
    if (typeof r !== 'object' || r === null || Array.isArray(r)) return 'result is not an object';
    if (!Array.isArray(r.content)) return 'no content array';
    if (r.isError === true) return this.allowIsError ? null : `isError: true (${clip(JSON.stringify(r.content))})`;
    const sc = r.structuredContent;
    if (sc === undefined) return this.outputSchema ? 'no structuredContent although the tool declares outputSchema' : null;
    if (typeof sc !== 'object' || sc === null || Array.isArray(sc)) return 'structuredContent is not an object';
    if (sc.text !== ECHO_TEXT) return `structuredContent.text is ${JSON.stringify(sc.text)}, not ${JSON.stringify(ECHO_TEXT)}`;
    return null;
  }

  request(method, params, ms) {
    const id = this.nextId++;
    const line = JSON.stringify(params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params });
    return this.wait(ms, () => `no response to ${method} (id ${id})`, (resolve) => {
      this.control.set(id, { method, resolve });
      this.write(`${line}\n`);
    });
  }

  notify(method, params) {
    this.write(`${JSON.stringify(params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params })}\n`);
  }

  async runPhase(name, calls, window, measure) {
    const p = new Phase(this, name, calls, window);
    const cpu0 = measure ? readCpu(this.pid) : null;
    const h0 = measure ? process.cpuUsage() : null;
    const t0 = now();
    this.phase = p;
    await this.wait(this.opts.timeoutMs, () => `${name} phase: ${p.sent - p.done} awaited responses missing (${p.done} of ${p.calls} calls answered)`, (resolve) => {
      p.resolve = resolve;
      p.fill();
      this.flush();
    });
    const h1 = measure ? process.cpuUsage(h0) : null;
    const cpu1 = measure ? readCpu(this.pid) : null;
    this.phase = null;
    if (!measure) return null;
    const seconds = (p.tEnd - t0) / 1000;
    const lat = p.lat.sort();
    const pct = (q) => lat[Math.min(lat.length - 1, Math.max(0, Math.ceil(q * lat.length) - 1))];
    let sum = 0;
    for (let i = 0; i < lat.length; i++) sum += lat[i];
    const out = {
      calls, window, seconds,
      reqPerSec: calls / seconds,
      meanMs: sum / lat.length,
      p50Ms: pct(0.5), p90Ms: pct(0.9), p99Ms: pct(0.99), maxMs: lat[lat.length - 1],
      serverCpuTicks: null, serverCpuUsPerCall: null, serverCpuSchedUsPerCall: null, serverChildCpuTicks: null,
      harnessCpuUsPerCall: (h1.user + h1.system) / calls,
    };
    if (cpu0 && cpu1) {
      out.serverCpuTicks = cpu1.ticks - cpu0.ticks;
      out.serverCpuUsPerCall = (out.serverCpuTicks * 1e6) / clkTck() / calls;
      out.serverChildCpuTicks = cpu1.childTicks - cpu0.childTicks;
      if (cpu0.schedNs !== null && cpu1.schedNs !== null) out.serverCpuSchedUsPerCall = (cpu1.schedNs - cpu0.schedNs) / 1000 / calls;
    }
    return out;
  }

  waitExit(ms) {
    if (this.exit || !this.pid) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), ms);
      this.exitWaiters.push(() => { clearTimeout(timer); resolve(true); });
    });
  }

  waitStdoutClosed(ms) {
    if (this.stdoutClosed || !this.child) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), ms);
      this.stdoutWaiters.push(() => { clearTimeout(timer); resolve(true); });
    });
  }

  // The spec's client sequence: close stdin, wait 3 s, SIGTERM, wait 2 s, SIGKILL.
  async shutdown() {
    const res = { neededSignal: null, exitCode: null, exitSignal: null, msToExit: null, exitedBeforeStdinClosed: false };
    if (!this.child) return res;
    res.exitedBeforeStdinClosed = this.exit !== null;
    const t = now();
    this.stdinClosed = true;
    try { this.child.stdin.end(); } catch { /* already closed */ }
    if (!(await this.waitExit(3000))) {
      res.neededSignal = 'SIGTERM';
      this.child.kill('SIGTERM');
      if (!(await this.waitExit(2000))) {
        res.neededSignal = 'SIGKILL';
        this.child.kill('SIGKILL');
        await this.waitExit(5000);
      }
    }
    // Validate whatever the server wrote before exiting (closing stdout may lag the exit event).
    await this.waitStdoutClosed(1000);
    if (this.exit) {
      res.exitCode = this.exit.code;
      res.exitSignal = this.exit.signal;
      res.msToExit = res.exitedBeforeStdinClosed ? 0 : Math.max(0, this.exit.t - t);
    }
    return res;
  }
}

const live = new Set();
function killLive() {
  for (const c of live) {
    try { c.kill('SIGKILL'); } catch { /* gone */ }
  }
}
process.on('exit', killLive);
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    killLive();
    process.exit(130);
  });
}

function stderrTail(file, bytes = 2048) {
  try {
    const st = fs.statSync(file);
    const fd = fs.openSync(file, 'r');
    const len = Math.min(bytes, st.size);
    const b = Buffer.alloc(len);
    fs.readSync(fd, b, 0, len, st.size - len);
    fs.closeSync(fd);
    return { bytes: st.size, tail: b.toString('utf8') };
  } catch {
    return { bytes: 0, tail: '' };
  }
}

async function runOnce(server, runIndex, opts, stderrDir) {
  const stderrPath = path.join(stderrDir, `${server.name.replace(/[^A-Za-z0-9_.-]/g, '_')}-run${runIndex + 1}.log`);
  const s = new Session(server, opts, stderrPath);
  const r = {
    run: runIndex + 1, ok: false, error: null, warnings: [], pid: 0,
    startupMs: null, protocolVersion: null, serverInfo: null, serverCapabilities: null,
    outputSchema: null, toolsPages: 0, toolsCount: 0,
    idleRssKiB: null, peakRssKiB: null, endRssKiB: null, threadsIdle: null, threadsEnd: null,
    children: [], phases: {}, shutdown: null, serverRequests: null, serverNotifications: null,
    stderrBytes: 0, stderrFile: stderrPath,
  };
  try {
    s.spawn();
    r.pid = s.pid;
    const init = await s.request('initialize', {
      protocolVersion: PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: HARNESS_NAME, version: HARNESS_VERSION },
    }, opts.handshakeTimeoutMs);
    r.startupMs = init.t - s.t0;
    const ir = init.result;
    if (typeof ir !== 'object' || ir === null || Array.isArray(ir)) throw new ValidationError('initialize result is not an object');
    if (typeof ir.protocolVersion !== 'string') throw new ValidationError('initialize result has no protocolVersion string');
    r.protocolVersion = ir.protocolVersion;
    if (ir.protocolVersion !== PROTOCOL_VERSION) r.warnings.push(`negotiated protocolVersion ${ir.protocolVersion}, requested ${PROTOCOL_VERSION}`);
    r.serverInfo = ir.serverInfo ?? null;
    if (!r.serverInfo || typeof r.serverInfo.name !== 'string' || typeof r.serverInfo.version !== 'string') {
      r.warnings.push('initialize result lacks serverInfo.name/version');
    }
    r.serverCapabilities = ir.capabilities ?? null;
    if (!ir.capabilities || typeof ir.capabilities !== 'object' || !ir.capabilities.tools) {
      r.warnings.push('server does not declare the tools capability');
    }
    s.notify('notifications/initialized');

    let cursor;
    const seen = new Set();
    let tool = null;
    for (;;) {
      const page = await s.request('tools/list', cursor === undefined ? undefined : { cursor }, opts.handshakeTimeoutMs);
      r.toolsPages++;
      const pr = page.result;
      if (typeof pr !== 'object' || pr === null || !Array.isArray(pr.tools)) throw new ValidationError('tools/list result has no tools array');
      r.toolsCount += pr.tools.length;
      for (const t of pr.tools) if (t && t.name === TOOL_NAME) tool = t;
      if (pr.nextCursor === undefined) break;
      if (typeof pr.nextCursor !== 'string') throw new ValidationError(`tools/list nextCursor is ${JSON.stringify(pr.nextCursor)}, not a string`);
      if (seen.has(pr.nextCursor)) throw new ValidationError(`tools/list repeats cursor ${JSON.stringify(pr.nextCursor)}`);
      seen.add(pr.nextCursor);
      cursor = pr.nextCursor;
    }
    if (!tool) throw new ValidationError(`tools/list does not list a tool named ${TOOL_NAME}`);
    r.outputSchema = tool.outputSchema !== undefined;
    s.outputSchema = r.outputSchema;
    if (!r.outputSchema) r.warnings.push('echo tool declares no outputSchema (structuredContent not required)');

    await sleep(opts.idleWaitMs);
    if (s.failure) throw new ValidationError(s.failure);
    const idle = readStatus(s.pid);
    r.idleRssKiB = idle.VmRSS ?? null;
    r.threadsIdle = idle.Threads ?? null;
    const kids = new Map(listChildren(s.pid).map((c) => [c.pid, c]));

    if (opts.warmup > 0) await s.runPhase('warm-up', opts.warmup, 1, false);
    for (const ph of opts.phases) {
      r.phases[ph] = await s.runPhase(ph, opts.calls, ph === 'sequential' ? 1 : opts.window, true);
    }

    const end = readStatus(s.pid);
    r.peakRssKiB = end.VmHWM ?? null;
    r.endRssKiB = end.VmRSS ?? null;
    r.threadsEnd = end.Threads ?? null;
    for (const c of listChildren(s.pid)) kids.set(c.pid, c);
    r.children = [...kids.values()];
    if (r.children.length) {
      r.warnings.push(`server has ${r.children.length} child process(es) (${r.children.map((c) => c.comm).join(', ')}): RSS and CPU cover only the top process`);
    }
  } catch (e) {
    if (!(e instanceof ValidationError)) s.fail(`harness error: ${e.stack || e.message}`);
    else s.fail(e.message);
  }
  r.shutdown = await s.shutdown();
  if (r.shutdown.neededSignal) r.warnings.push(`needed ${r.shutdown.neededSignal} to exit after stdin closed`);
  if (!r.shutdown.exitedBeforeStdinClosed && !r.shutdown.neededSignal && r.shutdown.exitCode !== 0 && r.shutdown.exitCode !== null) {
    r.warnings.push(`exit code ${r.shutdown.exitCode} after stdin EOF`);
  }
  for (const ph of Object.values(r.phases)) {
    if (ph && ph.serverChildCpuTicks) r.warnings.push('waited-for child processes used CPU (cutime/cstime), not counted');
  }
  r.serverRequests = s.serverRequests;
  r.serverNotifications = s.serverNotifications;
  const tail = stderrTail(stderrPath);
  r.stderrBytes = tail.bytes;
  r.error = s.failure;
  r.ok = !s.failure;
  if (!r.ok) r.stderrTail = tail.tail;
  return r;
}

// ------------------------------------------------------------------------------------------------
// Statistics and reporting

const METRICS = [
  { key: 'startupMs', label: 'start → initialize response', unit: 'ms', lower: true },
  { key: 'idleRssKiB', label: 'idle RSS after handshake', unit: 'KiB', lower: true },
  { key: 'peakRssKiB', label: 'peak RSS (VmHWM) at end', unit: 'KiB', lower: true },
  { key: 'phases.sequential.reqPerSec', label: 'sequential throughput', unit: 'req/s', lower: false, noisy: true },
  { key: 'phases.sequential.p50Ms', label: 'sequential p50', unit: 'ms', lower: true, noisy: true },
  { key: 'phases.sequential.p90Ms', label: 'sequential p90', unit: 'ms', lower: true, noisy: true },
  { key: 'phases.sequential.p99Ms', label: 'sequential p99', unit: 'ms', lower: true, noisy: true },
  { key: 'phases.sequential.maxMs', label: 'sequential max', unit: 'ms', lower: true, noisy: true },
  { key: 'phases.sequential.serverCpuUsPerCall', label: 'server CPU/call, sequential', unit: 'µs', lower: true },
  { key: 'phases.sequential.serverCpuSchedUsPerCall', label: '  same from schedstat (ns clock)', ratioLabel: 'server CPU/call, sequential, schedstat', unit: 'µs', lower: true },
  { key: 'phases.sequential.harnessCpuUsPerCall', label: 'harness CPU/call, sequential', unit: 'µs', lower: true },
  { key: 'phases.pipelined.reqPerSec', label: 'pipelined throughput', unit: 'req/s', lower: false, noisy: true },
  { key: 'phases.pipelined.p50Ms', label: 'pipelined p50 (incl. queueing)', unit: 'ms', lower: true, noisy: true },
  { key: 'phases.pipelined.p99Ms', label: 'pipelined p99 (incl. queueing)', unit: 'ms', lower: true, noisy: true },
  { key: 'phases.pipelined.maxMs', label: 'pipelined max', unit: 'ms', lower: true, noisy: true },
  { key: 'phases.pipelined.serverCpuUsPerCall', label: 'server CPU/call, pipelined', unit: 'µs', lower: true },
  { key: 'phases.pipelined.serverCpuSchedUsPerCall', label: '  same from schedstat (ns clock)', ratioLabel: 'server CPU/call, pipelined, schedstat', unit: 'µs', lower: true },
  { key: 'phases.pipelined.harnessCpuUsPerCall', label: 'harness CPU/call, pipelined', unit: 'µs', lower: true },
];

const RATIO_KEYS = ['phases.sequential.serverCpuUsPerCall', 'phases.pipelined.serverCpuUsPerCall',
  'phases.sequential.serverCpuSchedUsPerCall', 'phases.pipelined.serverCpuSchedUsPerCall', 'startupMs', 'idleRssKiB',
  'phases.sequential.reqPerSec', 'phases.pipelined.reqPerSec', 'phases.sequential.p99Ms', 'phases.pipelined.p99Ms'];

function getPath(obj, key) {
  let v = obj;
  for (const k of key.split('.')) {
    if (v === null || v === undefined) return null;
    v = v[k];
  }
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

function median(xs) {
  if (!xs.length) return null;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

function summarize(values) {
  const xs = values.filter((v) => v !== null);
  if (!xs.length) return null;
  return { median: median(xs), min: Math.min(...xs), max: Math.max(...xs), n: xs.length };
}

function fmtNum(v, unit) {
  if (v === null || v === undefined) return '–';
  switch (unit) {
    case 'req/s':
    case 'KiB': return Math.round(v).toLocaleString('en-US');
    case 'ms': return v < 1 ? v.toFixed(3) : v < 10 ? v.toFixed(2) : v < 100 ? v.toFixed(1) : Math.round(v).toLocaleString('en-US');
    case 'µs': return v < 10 ? v.toFixed(2) : v < 100 ? v.toFixed(1) : Math.round(v).toLocaleString('en-US');
    default: return String(v);
  }
}

function fmtSummary(s, unit) {
  if (!s) return '–';
  if (s.n === 1) return fmtNum(s.median, unit);
  return `${fmtNum(s.median, unit)} [${fmtNum(s.min, unit)}..${fmtNum(s.max, unit)}]`;
}

function fmtRatio(x) {
  if (x === null || x === undefined || Number.isNaN(x)) return '–';
  if (!Number.isFinite(x)) return '∞';
  if (x >= 100) return `${x.toFixed(0)}×`;
  if (x >= 10) return `${x.toFixed(1)}×`;
  if (x >= 0.01 || x === 0) return `${x.toFixed(2)}×`;
  return `${x.toPrecision(2)}×`;
}

function ratioRows(servers) {
  const rows = [];
  for (let i = 0; i < servers.length; i++) {
    for (let j = i + 1; j < servers.length; j++) {
      const a = servers[i];
      const b = servers[j];
      for (const key of RATIO_KEYS) {
        const m = METRICS.find((x) => x.key === key);
        const sa = a.summary[key];
        const sb = b.summary[key];
        if (!sa || !sb || (!sa.median && !sb.median)) continue;
        // A zero median (tick-based CPU below one tick per phase) gives ratio 0 or ∞: below resolution.
        const ratio = sb.median ? sa.median / sb.median : Infinity;
        // Paired per-run ratios: runs with the same index were interleaved, so they share conditions.
        const paired = [];
        for (const ra of a.runs) {
          const rb = b.runs.find((x) => x.run === ra.run);
          if (!ra.ok || !rb || !rb.ok) continue;
          const va = getPath(ra, key);
          const vb = getPath(rb, key);
          if (va !== null && vb) paired.push(va / vb);
          else if (va && vb === 0) paired.push(Infinity);
        }
        const better = Math.abs(ratio - 1) < 0.005 ? 'equal' : (ratio < 1) === m.lower ? a.name : b.name;
        const factor = ratio >= 1 ? ratio : 1 / ratio;
        const atResolution = ratio === 0 || !Number.isFinite(ratio);
        rows.push({
          a: a.name, b: b.name, metric: key, label: m.ratioLabel || m.label, unit: m.unit, lowerIsBetter: m.lower,
          ratio, pairedMedian: median(paired), pairedMin: paired.length ? Math.min(...paired) : null,
          pairedMax: paired.length ? Math.max(...paired) : null, pairs: paired.length,
          better, factor: Number.isFinite(factor) ? factor : null, belowResolution: atResolution,
          withinNoise: Boolean(m.noisy) && factor < 2,
        });
      }
    }
  }
  return rows;
}

function pad(s, n) {
  const len = [...s].length;
  return len >= n ? s : s + ' '.repeat(n - len);
}

function renderTable(header, rows) {
  const widths = header.map((h, c) => Math.max([...h].length, ...rows.map((r) => [...(r[c] ?? '')].length)));
  const line = (cells) => cells.map((x, c) => pad(x ?? '', widths[c])).join('  ').trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

function distinct(values) {
  return [...new Set(values.filter((v) => v !== null && v !== undefined).map((v) => (typeof v === 'string' ? v : JSON.stringify(v))))];
}

function report(result) {
  const { config, machine, servers } = result;
  const out = [];
  out.push(`MCP stdio benchmark: ${config.runs} runs per server, interleaved${config.rotate ? ' (starting server rotated each run)' : ''}; ` +
    `${config.calls} calls per phase, window ${config.window}, ${config.warmup} warm-up calls; tools/call ${TOOL_NAME} ${ARGS_JSON}`);
  out.push(`machine: ${machine.cpuModel}, ${machine.cores} cores, Linux ${machine.kernel}, node ${machine.node}, CLK_TCK ${machine.clkTck}` +
    (Object.keys(machine.build).length ? `; ${Object.entries(machine.build).map(([k, v]) => `${k}: ${v}`).join(', ')}` : ''));
  out.push('');
  const header = ['metric (median [min..max])', ...servers.map((s) => s.name)];
  const rows = [];
  rows.push(['server', ...servers.map((s) => s.versions.join(' | ') || '–')]);
  rows.push(['protocolVersion', ...servers.map((s) => s.protocolVersions.join(' | ') || '–')]);
  rows.push(['echo declares outputSchema', ...servers.map((s) => s.outputSchema.map((v) => (v ? 'yes' : 'no')).join(' | ') || '–')]);
  rows.push(['valid runs', ...servers.map((s) => `${s.runs.filter((r) => r.ok).length}/${s.runs.length}`)]);
  for (const m of METRICS) {
    if (servers.every((s) => !s.summary[m.key])) continue;
    rows.push([`${m.label} (${m.unit})`, ...servers.map((s) => fmtSummary(s.summary[m.key], m.unit))]);
  }
  rows.push(['threads (idle)', ...servers.map((s) => fmtSummary(s.summary.threadsIdle, ''))]);
  rows.push(['child processes', ...servers.map((s) => (s.childProcesses.length ? s.childProcesses.join(', ') : 'none'))]);
  rows.push(['needed a signal to exit', ...servers.map((s) => {
    const n = s.runs.filter((r) => r.shutdown && r.shutdown.neededSignal).length;
    return n ? `${n} run(s)` : 'no';
  })]);
  rows.push(['stderr bytes per run', ...servers.map((s) => fmtSummary(s.summary.stderrBytes, 'KiB'))]);
  out.push(renderTable(header, rows));

  if (result.ratios.length) {
    out.push('');
    out.push('Ratios A ÷ B of the medians; "paired" = per-run ratios of interleaved runs, median [min..max].');
    out.push('req/s and latency differences under 2× are noise on a shared machine (docs/mcp.md §7.4); server CPU/call is the steady figure.');
    if (config.runs < 7) out.push(`Only ${config.runs} run(s) per server: docs/mcp.md §7.4 asks for ≥ 7 interleaved runs before comparing.`);
    const rrows = result.ratios.map((r) => [
      `${r.a} ÷ ${r.b}`, r.label, fmtRatio(r.ratio),
      r.pairs ? `${fmtRatio(r.pairedMedian)} [${fmtRatio(r.pairedMin)}..${fmtRatio(r.pairedMax)}]` : '–',
      r.belowResolution ? `${r.better} lower; a median of 0 is below the tick resolution (see schedstat)`
        : r.better === 'equal' ? 'equal'
          : `${r.better} ${fmtRatio(r.factor)} ${r.lowerIsBetter ? 'lower' : 'higher'}${r.withinNoise ? ' (< 2×: noise)' : ''}`,
    ]);
    out.push(renderTable(['A ÷ B', 'metric', 'ratio', 'paired', 'reading'], rrows));
  }

  const failed = [];
  const warned = [];
  for (const s of servers) {
    for (const r of s.runs) {
      if (!r.ok) failed.push(`  ${s.name} run ${r.run}: ${r.error}`);
      for (const w of r.warnings) warned.push(`${s.name}: ${w}`);
    }
  }
  for (const s of servers) {
    for (const ph of config.phases) {
      const ticks = median(s.runs.filter((r) => r.ok && r.phases[ph]).map((r) => r.phases[ph].serverCpuTicks));
      if (ticks !== null && ticks < 20) {
        warned.push(`${s.name}: ${ph} server CPU is ${ticks} tick(s) of ${1000 / config.clkTck} ms per phase (median), ` +
          `too coarse for utime+stime; read the schedstat row or raise --calls`);
      }
    }
  }
  if (warned.length) {
    out.push('');
    out.push('Warnings:');
    const counts = new Map();
    for (const w of warned) counts.set(w, (counts.get(w) || 0) + 1);
    for (const [w, n] of counts) out.push(`  ${w}${n > 1 ? ` (${n} runs)` : ''}`);
  }
  out.push('');
  if (failed.length) {
    out.push(`FAILED: ${failed.length} run(s) failed strict validation:`);
    out.push(...failed);
  } else {
    out.push('All runs passed strict validation.');
  }
  return out.join('\n');
}

// ------------------------------------------------------------------------------------------------
// Machine and server description

function tryExec(cmd, args) {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 10000 }).trim();
  } catch {
    return null;
  }
}

function machineInfo(meta) {
  let cpuModel = null;
  let processors = 0;
  try {
    const text = fs.readFileSync('/proc/cpuinfo', 'utf8');
    const m = /^model name\s*:\s*(.*)$/m.exec(text);
    cpuModel = m ? m[1].trim() : null;
    processors = (text.match(/^processor\s*:/gm) || []).length;
  } catch { /* not Linux */ }
  let osRelease = null;
  try {
    const m = /^PRETTY_NAME="?([^"\n]*)"?/m.exec(fs.readFileSync('/etc/os-release', 'utf8'));
    osRelease = m ? m[1] : null;
  } catch { /* none */ }
  return {
    cpuModel: cpuModel || os.cpus()[0]?.model || 'unknown',
    cores: processors || os.cpus().length,
    availableParallelism: os.availableParallelism ? os.availableParallelism() : os.cpus().length,
    kernel: tryExec('uname', ['-r']) || os.release(),
    os: osRelease,
    arch: process.arch,
    memTotalKiB: Math.round(os.totalmem() / 1024),
    node: process.version,
    clkTck: clkTck(),
    loadavgStart: os.loadavg(),
    hostname: os.hostname(),
    build: meta,
  };
}

function fileInfo(p) {
  try {
    const st = fs.statSync(p);
    if (!st.isFile()) return null;
    const sha256 = createHash('sha256').update(fs.readFileSync(p)).digest('hex');
    return { path: p, bytes: st.size, mtime: st.mtime.toISOString(), sha256 };
  } catch {
    return null;
  }
}

// Resolve and describe a server command before any run, so a typo is a usage error, not 7 failures.
function prepareServer(s) {
  let cmd = s.cmd;
  if (cmd.includes('/')) {
    cmd = path.resolve(cmd);
    try {
      fs.accessSync(cmd, fs.constants.X_OK);
    } catch {
      throw new UsageError(`server ${s.name}: ${cmd} is not an executable file`);
    }
  }
  const files = [fileInfo(cmd), ...s.args.map((a) => (fs.existsSync(a) ? fileInfo(path.resolve(a)) : null))].filter(Boolean);
  const runtime = /^(node|nodejs|bun|deno)([0-9.]*)$/.test(path.basename(cmd)) ? tryExec(cmd, ['--version']) : null;
  return { name: s.name, cmd, args: s.args, files, runtimeVersion: runtime };
}

// ------------------------------------------------------------------------------------------------

async function main() {
  let opts;
  try {
    opts = parseArgs(process.argv.slice(2));
    if (opts.help) {
      process.stdout.write(`${usage()}\n`);
      return 0;
    }
    opts.servers = opts.servers.map(prepareServer);
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`mcp_stdio_bench: ${e.message}\n\n${usage()}\n`);
      return 2;
    }
    throw e;
  }

  const ownStderrDir = !opts.stderrDir;
  const stderrDir = opts.stderrDir ? path.resolve(opts.stderrDir) : fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-stdio-bench-'));
  fs.mkdirSync(stderrDir, { recursive: true });

  const machine = machineInfo(opts.meta);
  const config = {
    runs: opts.runs, calls: opts.calls, window: opts.window, warmup: opts.warmup, phases: opts.phases,
    warmupMode: 'sequential', idleWaitMs: opts.idleWaitMs, timeoutMs: opts.timeoutMs,
    handshakeTimeoutMs: opts.handshakeTimeoutMs, rotate: opts.rotate, allowIsError: opts.allowIsError,
    protocolVersion: PROTOCOL_VERSION, tool: TOOL_NAME, arguments: JSON.parse(ARGS_JSON),
    latencyPercentiles: 'nearest rank', pipelinedLatency: 'send of the request to arrival of its response, including queueing',
    serverCpu: 'utime+stime of /proc/<pid>/stat (whole thread group, CLK_TCK ticks); schedstat figure sums /proc/<pid>/task/*/schedstat run time (ns)',
    harnessCpu: 'process.cpuUsage() of the harness over the phase',
    shutdown: 'close stdin, 3 s, SIGTERM, 2 s, SIGKILL',
    clkTck: clkTck(),
  };
  const startedAt = new Date().toISOString();
  const state = opts.servers.map((s) => ({ ...s, runs: [] }));

  let stop = false;
  for (let run = 0; run < opts.runs && !stop; run++) {
    const order = opts.rotate ? state.map((_, k) => state[(k + run) % state.length]) : state;
    for (const s of order) {
      const r = await runOnce(s, run, opts, stderrDir);
      s.runs.push(r);
      if (!opts.quiet) {
        const seq = r.phases.sequential;
        const pip = r.phases.pipelined;
        const bits = [
          `run ${run + 1}/${opts.runs} ${s.name}`,
          r.startupMs !== null ? `start ${fmtNum(r.startupMs, 'ms')} ms` : null,
          r.idleRssKiB !== null ? `idle ${fmtNum(r.idleRssKiB, 'KiB')} KiB` : null,
          seq ? `seq ${fmtNum(seq.reqPerSec, 'req/s')} req/s p99 ${fmtNum(seq.p99Ms, 'ms')} ms cpu ${fmtNum(seq.serverCpuUsPerCall, 'µs')} µs` : null,
          pip ? `pipe ${fmtNum(pip.reqPerSec, 'req/s')} req/s p99 ${fmtNum(pip.p99Ms, 'ms')} ms cpu ${fmtNum(pip.serverCpuUsPerCall, 'µs')} µs` : null,
          r.ok ? 'ok' : `FAILED: ${r.error}`,
        ].filter(Boolean);
        process.stderr.write(`${bits.join(', ')}\n`);
      }
      if (!r.ok && opts.failFast) { stop = true; break; }
    }
  }

  machine.loadavgEnd = os.loadavg();
  const servers = state.map((s) => {
    const ok = s.runs.filter((r) => r.ok);
    const summary = {};
    for (const m of METRICS) summary[m.key] = summarize(ok.map((r) => getPath(r, m.key)));
    summary.threadsIdle = summarize(ok.map((r) => r.threadsIdle));
    summary.stderrBytes = summarize(s.runs.map((r) => r.stderrBytes));
    const childProcesses = distinct(s.runs.flatMap((r) => r.children.map((c) => c.comm)));
    return {
      name: s.name, command: s.cmd, args: s.args, files: s.files, runtimeVersion: s.runtimeVersion,
      serverInfo: s.runs.find((r) => r.serverInfo)?.serverInfo ?? null,
      versions: distinct(s.runs.map((r) => (r.serverInfo ? `${r.serverInfo.name} ${r.serverInfo.version}` : null))),
      protocolVersions: distinct(s.runs.map((r) => r.protocolVersion)),
      outputSchema: [...new Set(s.runs.map((r) => r.outputSchema).filter((v) => v !== null))],
      childProcesses,
      validRuns: ok.length,
      summary,
      runs: s.runs,
    };
  });
  const failedRuns = servers.reduce((n, s) => n + s.runs.filter((r) => !r.ok).length, 0);
  const result = {
    harness: { name: HARNESS_NAME, version: HARNESS_VERSION, spec: 'docs/mcp.md §7.4' },
    startedAt, finishedAt: new Date().toISOString(), ok: failedRuns === 0, failedRuns,
    config, machine, servers, ratios: ratioRows(servers),
  };

  const keepStderr = failedRuns > 0 || !ownStderrDir;
  if (!keepStderr) for (const s of servers) for (const r of s.runs) r.stderrFile = null;

  process.stdout.write(`${report(result)}\n`);
  if (opts.json) {
    fs.mkdirSync(path.dirname(path.resolve(opts.json)), { recursive: true });
    fs.writeFileSync(opts.json, `${JSON.stringify(result, null, 2)}\n`);
    process.stdout.write(`JSON written to ${opts.json}\n`);
  }
  if (!keepStderr) {
    fs.rmSync(stderrDir, { recursive: true, force: true });
  } else {
    process.stdout.write(`server stderr logs kept in ${stderrDir}\n`);
  }
  return failedRuns === 0 ? 0 : 1;
}

main().then((code) => { process.exitCode = code; }, (e) => {
  process.stderr.write(`mcp_stdio_bench: ${e.stack || e}\n`);
  process.exitCode = 2;
});
