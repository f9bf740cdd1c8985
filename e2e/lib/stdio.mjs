// Raw stdio driver: spawns the server, writes exact bytes, and records every stdout line with its
// raw text, parsed form and arrival time. Responses are matched by the raw text of their id, so
// 5, "5" and 9007199254740993 stay distinct.

import { spawn } from 'node:child_process';
import { messageProblems, INIT_PARAMS } from './jsonrpc.mjs';
import { rawId } from './rawjson.mjs';
import { SERVER_BIN, requireServerBinary, withTimeout, sleep } from './env.mjs';

const live = new Set();
process.on('exit', () => {
  for (const p of live) {
    try { p.kill('SIGKILL'); } catch { /* already gone */ }
  }
});

export class StdioServer {
  // Spawns the server binary with `args`; resolves once the process has been spawned.
  static async start(args = [], { bin = SERVER_BIN, env } = {}) {
    if (bin === SERVER_BIN) requireServerBinary();
    const proc = spawn(bin, args, { stdio: ['pipe', 'pipe', 'pipe'], env: env ?? process.env });
    const server = new StdioServer(proc);
    await new Promise((resolve, reject) => {
      proc.once('spawn', resolve);
      proc.once('error', reject);
    });
    return server;
  }

  constructor(proc) {
    this.proc = proc;
    this.lines = []; // {raw, msg, id (raw id text or undefined), t}
    this.violations = []; // {raw, problems}
    this.stderr = '';
    this.lastOutputAt = Date.now();
    this.exit = null; // {code, signal, t}
    this.stdinError = null;
    this._idCounter = 1000;
    this._waiters = new Set();
    this._exitWaiters = new Set();
    this._buf = Buffer.alloc(0);
    live.add(proc);

    proc.stdout.on('data', (chunk) => this._onStdout(chunk));
    proc.stderr.on('data', (chunk) => { this.stderr += chunk.toString('utf8'); });
    proc.stdin.on('error', (e) => { this.stdinError = e; });
    proc.on('exit', (code, signal) => {
      this.exit = { code, signal, t: Date.now() };
      live.delete(proc);
      for (const w of this._exitWaiters) w(this.exit);
      this._exitWaiters.clear();
      for (const w of this._waiters) w.check(true);
    });
  }

  _onStdout(chunk) {
    this.lastOutputAt = Date.now();
    this._buf = Buffer.concat([this._buf, chunk]);
    let nl;
    while ((nl = this._buf.indexOf(0x0a)) >= 0) {
      const raw = this._buf.subarray(0, nl).toString('utf8');
      this._buf = this._buf.subarray(nl + 1);
      this._addLine(raw);
    }
  }

  _addLine(raw) {
    const problems = messageProblems(raw);
    if (problems.length) this.violations.push({ raw: raw.slice(0, 300), problems });
    let msg;
    let id;
    try {
      msg = JSON.parse(raw);
      id = rawId(raw);
    } catch { /* recorded as a violation */ }
    const entry = { raw, msg, id, t: Date.now(), index: this.lines.length };
    this.lines.push(entry);
    for (const w of [...this._waiters]) w.check(false);
  }

  // Writes `data` verbatim (string or Buffer); a string or object gets a trailing newline.
  send(data) {
    if (Buffer.isBuffer(data)) {
      this.proc.stdin.write(data);
      return;
    }
    const text = typeof data === 'string' ? data : JSON.stringify(data);
    this.proc.stdin.write(text + '\n');
  }

  sendRaw(data) {
    this.proc.stdin.write(data);
  }

  nextId() {
    return ++this._idCounter;
  }

  notify(method, params) {
    const msg = { jsonrpc: '2.0', method };
    if (params !== undefined) msg.params = params;
    this.send(msg);
  }

  // Sends a request; resolves with the parsed response message. `id` may be given as a number,
  // a string, or (rawId) the exact JSON text of the id.
  async request(method, params, { id, rawIdText, timeout = 10000 } = {}) {
    const idText = rawIdText ?? JSON.stringify(id ?? this.nextId());
    const paramsText = params === undefined ? '' : `,"params":${JSON.stringify(params)}`;
    const from = this.lines.length;
    this.send(`{"jsonrpc":"2.0","id":${idText},"method":${JSON.stringify(method)}${paramsText}}`);
    const entry = await this.waitForResponse(idText, { timeout, from });
    return entry.msg;
  }

  // Waits for the first response (line with result or error) whose raw id equals idText.
  waitForResponse(idText, { timeout = 10000, from = 0 } = {}) {
    return this.waitFor((e) => e.id === idText && e.msg && e.msg.method === undefined,
                        { timeout, from, what: `response with id ${idText}` });
  }

  // Waits for the first line at or after index `from` matching pred(entry).
  waitFor(pred, { timeout = 10000, from = 0, what = 'matching line' } = {}) {
    return new Promise((resolve, reject) => {
      let timer;
      let next = from;
      const waiter = {
        check: (exited) => {
          for (; next < this.lines.length; next++) {
            const i = next;
            if (pred(this.lines[i])) {
              this._waiters.delete(waiter);
              clearTimeout(timer);
              resolve(this.lines[i]);
              return;
            }
          }
          if (exited) {
            this._waiters.delete(waiter);
            clearTimeout(timer);
            reject(new Error(`server exited (${JSON.stringify(this.exit)}) while waiting for ${what}; ` +
                             `stderr tail: ${this.stderr.slice(-500)}`));
          }
        },
      };
      timer = setTimeout(() => {
        this._waiters.delete(waiter);
        reject(new Error(`timed out after ${timeout} ms waiting for ${what}`));
      }, timeout);
      this._waiters.add(waiter);
      waiter.check(this.exit !== null);
    });
  }

  // Resolves when `count` lines at or after `from` satisfy pred.
  async waitForCount(pred, count, { timeout = 10000, from = 0, what = 'lines' } = {}) {
    const deadline = Date.now() + timeout;
    for (;;) {
      const n = this.lines.slice(from).filter(pred).length;
      if (n >= count) return;
      if (this.exit) throw new Error(`server exited while waiting for ${count} ${what} (have ${n})`);
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${count} ${what} (have ${n})`);
      await sleep(10);
    }
  }

  // Resolves once stdout has been silent for `ms` (bounded by `max`); returns the lines that
  // arrived from index `from` on.
  async quiet(ms = 300, { from = this.lines.length, max = 10000 } = {}) {
    const start = Date.now();
    for (;;) {
      const idle = Date.now() - Math.max(this.lastOutputAt, start);
      if (idle >= ms) break;
      if (Date.now() - start > max) throw new Error(`stdout not quiet after ${max} ms`);
      await sleep(Math.min(20, ms - idle + 1));
    }
    return this.lines.slice(from);
  }

  entriesWithId(idText) {
    return this.lines.filter((e) => e.id === idText && e.msg && e.msg.method === undefined);
  }

  // initialize + notifications/initialized; returns the initialize result.
  async initialize({ protocolVersion = '2025-11-25', capabilities = {} } = {}) {
    const res = await this.request('initialize', INIT_PARAMS(protocolVersion, capabilities));
    if (res.error) throw new Error(`initialize failed: ${JSON.stringify(res.error)}`);
    this.notify('notifications/initialized');
    return res.result;
  }

  closeStdin() {
    this.proc.stdin.end();
  }

  // Resolves with {code, signal, t} when the process exits, or rejects after timeout.
  waitExit(timeout = 5000) {
    if (this.exit) return Promise.resolve(this.exit);
    return withTimeout(new Promise((resolve) => this._exitWaiters.add(resolve)), timeout,
                       'server exit');
  }

  // Stops the server the spec's way: close stdin, then signals if needed.
  async stop() {
    if (this.exit) return this.exit;
    try { this.proc.stdin.end(); } catch { /* ignore */ }
    try {
      return await this.waitExit(3000);
    } catch {
      this.proc.kill('SIGTERM');
      try {
        return await this.waitExit(2000);
      } catch {
        this.proc.kill('SIGKILL');
        return this.waitExit(2000);
      }
    }
  }
}

// Starts a server and completes the handshake.
export async function startInitialized(args = [], initOpts = {}) {
  const server = await StdioServer.start(args);
  await server.initialize(initOpts);
  return server;
}
