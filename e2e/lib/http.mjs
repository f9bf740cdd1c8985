// Streamable HTTP helpers: start the server on port 0, raw requests through node:http (which,
// unlike fetch, lets a test set Host and send arbitrary bytes), and parsing of JSON and SSE bodies.

import { spawn } from 'node:child_process';
import http from 'node:http';
import { SERVER_BIN, requireServerBinary, withTimeout } from './env.mjs';
import { INIT_PARAMS, messageProblems } from './jsonrpc.mjs';
import { rawId } from './rawjson.mjs';

const live = new Set();
process.on('exit', () => {
  for (const p of live) {
    try { p.kill('SIGKILL'); } catch { /* already gone */ }
  }
});

export const ACCEPT_BOTH = 'application/json, text/event-stream';

// Spawns `bin ...command --http 0 ...args` (by default the conformance server, with no command;
// `command` is a subcommand such as ['mcp']) and waits for the stderr line
// `listening on http://127.0.0.1:<port>/mcp`. `env` replaces the child's environment if given.
export async function startHttpServer(args = [], {
  timeout = 10000, bin = SERVER_BIN, command = [], env = undefined,
} = {}) {
  if (bin === SERVER_BIN) requireServerBinary();
  const proc = spawn(bin, [...command, '--http', '0', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env });
  live.add(proc);
  const srv = {
    proc,
    stderr: '',
    stdout: '',
    exit: null,
    port: 0,
    url: '',
    async stop() {
      if (srv.exit) return srv.exit;
      const exited = new Promise((resolve) => proc.once('exit', (code, signal) => resolve({ code, signal })));
      proc.kill('SIGTERM');
      try {
        return await withTimeout(exited, 3000, 'HTTP server exit after SIGTERM');
      } catch {
        proc.kill('SIGKILL');
        return exited;
      }
    },
  };
  proc.stderr.on('data', (c) => { srv.stderr += c.toString('utf8'); });
  proc.stdout.on('data', (c) => { srv.stdout += c.toString('utf8'); });
  proc.on('exit', (code, signal) => {
    srv.exit = { code, signal };
    live.delete(proc);
  });
  const started = new Promise((resolve, reject) => {
    const onData = () => {
      const m = /listening on http:\/\/127\.0\.0\.1:(\d+)\/mcp/.exec(srv.stderr);
      if (m) {
        proc.stderr.off('data', onData);
        resolve(Number(m[1]));
      }
    };
    proc.stderr.on('data', onData);
    proc.once('error', reject);
    proc.once('exit', (code, signal) => reject(new Error(
      `server exited before listening (code ${code}, signal ${signal}); stderr: ${srv.stderr.slice(-1000)}`)));
  });
  try {
    srv.port = await withTimeout(started, timeout, 'listening line on stderr');
  } catch (e) {
    proc.kill('SIGKILL');
    throw e;
  }
  srv.url = `http://127.0.0.1:${srv.port}/mcp`;
  srv.origin = `http://127.0.0.1:${srv.port}`;
  return srv;
}

// Parses a text/event-stream body into events {id, event, data, retry} (data lines joined by \n).
export function parseSse(text) {
  const events = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    if (!block.trim()) continue;
    const ev = {};
    const data = [];
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'data') data.push(value);
      else if (field === 'id' || field === 'event' || field === 'retry') ev[field] = value;
    }
    if (data.length) ev.data = data.join('\n');
    events.push(ev);
  }
  return events;
}

// One HTTP request. body: string | Buffer | object (JSON-encoded). Resolves at the end of the
// response with {status, headers, body (Buffer), text, contentType, messages, raws, events}, where
// messages are the JSON-RPC messages of a JSON or SSE body (raws their raw texts). With
// stream: true it resolves at the response headers with {status, headers, res, req}.
export function httpRequest(url, {
  method = 'POST', headers = {}, body, agent, timeout = 20000, stream = false, chunked = false,
} = {}) {
  const u = new URL(url);
  let payload;
  if (body === undefined) payload = undefined;
  else if (Buffer.isBuffer(body)) payload = body;
  else if (typeof body === 'string') payload = Buffer.from(body, 'utf8');
  else payload = Buffer.from(JSON.stringify(body), 'utf8');
  const hdrs = { ...headers };
  if (payload && !chunked && !Object.keys(hdrs).some((k) => k.toLowerCase() === 'content-length')) {
    hdrs['Content-Length'] = String(payload.length);
  }
  return new Promise((resolve, reject) => {
    let settled = false;
    const done = (fn, v) => {
      if (!settled) {
        settled = true;
        clearTimeout(timer);
        fn(v);
      }
    };
    const req = http.request({
      host: u.hostname, port: u.port, path: u.pathname + u.search, method, headers: hdrs,
      agent: agent ?? false, setHost: !Object.keys(hdrs).some((k) => k.toLowerCase() === 'host'),
    });
    const timer = setTimeout(() => {
      req.destroy();
      done(reject, new Error(`HTTP ${method} ${url} timed out after ${timeout} ms`));
    }, timeout);
    req.on('response', (res) => {
      if (stream) {
        done(resolve, { status: res.statusCode, headers: res.headers, res, req });
        return;
      }
      const chunks = [];
      const arrivals = [];
      res.on('data', (c) => {
        chunks.push(c);
        arrivals.push({ t: Date.now(), size: c.length });
      });
      res.on('end', () => {
        const buf = Buffer.concat(chunks);
        done(resolve, decorate({ status: res.statusCode, headers: res.headers, body: buf, arrivals }));
      });
      res.on('error', (e) => done(reject, e));
    });
    // An early response (413, 4xx) may make the rest of the upload fail; the response wins.
    req.on('error', (e) => setTimeout(() => done(reject, e), 200));
    if (payload) req.write(payload);
    req.end();
  });
}

function decorate(r) {
  r.text = r.body.toString('utf8');
  r.contentType = (r.headers['content-type'] || '').split(';')[0].trim().toLowerCase();
  r.raws = [];
  r.events = [];
  if (r.contentType === 'application/json' && r.text.length) {
    r.raws = [r.text];
  } else if (r.contentType === 'text/event-stream') {
    r.events = parseSse(r.text);
    r.raws = r.events.filter((e) => e.data !== undefined && e.data !== '').map((e) => e.data);
  }
  r.messages = r.raws.map((t) => {
    try { return JSON.parse(t); } catch { return { unparseable: t }; }
  });
  r.problems = r.raws.flatMap((t) => messageProblems(t).map((p) => `${p}: ${t.slice(0, 200)}`));
  // The response (result or error) whose raw id equals idText.
  r.responseFor = (idText) => {
    const i = r.raws.findIndex((t, k) => rawId(t) === idText && r.messages[k].method === undefined);
    return i < 0 ? undefined : r.messages[i];
  };
  return r;
}

// A Streamable HTTP session driven with raw POSTs.
export class HttpSession {
  constructor(url, { headers = {}, agent } = {}) {
    this.url = url;
    this.sessionId = undefined;
    this.protocolVersion = undefined;
    this.extraHeaders = headers;
    this.agent = agent;
    this._id = 0;
  }

  headers(extra = {}) {
    const h = { 'Content-Type': 'application/json', Accept: ACCEPT_BOTH, ...this.extraHeaders };
    if (this.sessionId) h['Mcp-Session-Id'] = this.sessionId;
    if (this.protocolVersion) h['MCP-Protocol-Version'] = this.protocolVersion;
    return { ...h, ...extra };
  }

  async initialize({ protocolVersion = '2025-11-25', capabilities = {} } = {}) {
    const r = await httpRequest(this.url, {
      headers: this.headers(),
      body: { jsonrpc: '2.0', id: 0, method: 'initialize', params: INIT_PARAMS(protocolVersion, capabilities) },
      agent: this.agent,
    });
    if (r.status !== 200) throw new Error(`initialize: HTTP ${r.status} ${r.text.slice(0, 300)}`);
    const msg = r.messages[0];
    if (!msg || !msg.result) throw new Error(`initialize failed: ${r.text.slice(0, 300)}`);
    this.sessionId = r.headers['mcp-session-id'];
    this.protocolVersion = msg.result.protocolVersion;
    this.initResponse = r;
    const n = await this.notify('notifications/initialized');
    if (n.status !== 202) throw new Error(`notifications/initialized: HTTP ${n.status}`);
    return msg.result;
  }

  // POSTs a raw body (string/Buffer/object) with the session's headers.
  post(body, { headers = {}, timeout, stream } = {}) {
    return httpRequest(this.url, { headers: this.headers(headers), body, agent: this.agent, timeout, stream });
  }

  // POSTs a request; resolves with the whole HTTP response (see httpRequest) plus `.msg`, the
  // JSON-RPC response for this id.
  async request(method, params, { id, headers, timeout } = {}) {
    const rid = id ?? ++this._id;
    const body = { jsonrpc: '2.0', id: rid, method };
    if (params !== undefined) body.params = params;
    const r = await this.post(body, { headers, timeout });
    r.msg = r.responseFor(JSON.stringify(rid));
    return r;
  }

  notify(method, params, { headers } = {}) {
    const body = { jsonrpc: '2.0', method };
    if (params !== undefined) body.params = params;
    return this.post(body, { headers });
  }

  delete() {
    return httpRequest(this.url, { method: 'DELETE', headers: this.headers(), agent: this.agent });
  }
}
