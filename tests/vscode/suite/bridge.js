// The real bridge for the in-host tests: started, restarted and stopped here (the
// workbench's environment names the binary, the workspace and the config dir), and an
// agent that speaks MCP to it over the same WebSocket Claude Code's IDE connection uses.
'use strict';
const { spawn } = require('child_process');
const fs = require('fs');
const http = require('http');
const path = require('path');
const vscode = require('vscode');

const WebSocket = require(process.env.SUITE_WS_MODULE);

const WORKSPACE = process.env.SUITE_WORKSPACE;
const CONFIG_DIR = process.env.CLAUDE_CONFIG_DIR;

/** Polls `check` until it returns something truthy. */
async function waitFor(check, what, timeoutMs = 15000, intervalMs = 50) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

function assert(cond, message) {
  if (!cond) throw new Error(`assertion failed: ${message}`);
}

function ws(...parts) {
  return path.join(WORKSPACE, ...parts);
}

class Bridge {
  constructor() {
    this.proc = undefined;
    this.port = undefined;
    this.token = undefined;
    this.log = path.join(path.dirname(CONFIG_DIR), 'bridge.log');
  }

  async start() {
    const out = fs.openSync(this.log, 'a');
    this.proc = spawn(process.env.BRIDGE_BIN, ['--workspace', WORKSPACE], { stdio: ['ignore', out, out], env: { ...process.env } });
    fs.closeSync(out);
    const dir = path.join(CONFIG_DIR, 'ide');
    const exited = { code: null };
    this.proc.once('exit', (code) => (exited.code = code));
    await waitFor(() => {
      if (exited.code !== null) {
        throw new Error(`the bridge exited with ${exited.code}: ${fs.readFileSync(this.log, 'utf8').slice(-2000)}`);
      }
      for (const name of fs.existsSync(dir) ? fs.readdirSync(dir) : []) {
        // Only `<port>.lock`: the bridge writes it through a temporary file first.
        if (!/^\d+\.lock$/.test(name)) continue;
        try {
          const lock = JSON.parse(fs.readFileSync(path.join(dir, name), 'utf8'));
          if (lock.pid === this.proc.pid) {
            this.port = Number(name.replace('.lock', ''));
            this.token = lock.authToken;
            return true;
          }
        } catch {
          // being written
        }
      }
      return false;
    }, `the bridge lock file (its log: ${this.log})`);
  }

  async stop() {
    if (!this.proc || this.proc.exitCode !== null) return;
    const exited = new Promise((r) => this.proc.once('exit', r));
    this.proc.kill('SIGTERM');
    await exited;
  }

  async restart() {
    await this.stop();
    await this.start();
  }

  /** GET `path` with the token: parsed JSON. */
  get(pathname) {
    return new Promise((resolve, reject) => {
      http
        .get({ host: '127.0.0.1', port: this.port, path: pathname, headers: { Authorization: `Bearer ${this.token}` } }, (res) => {
          let body = '';
          res.on('data', (c) => (body += c));
          res.on('end', () => resolve(JSON.parse(body)));
        })
        .on('error', reject);
    });
  }

  status() {
    return this.get('/status');
  }
}

/** An agent: MCP over the bridge's WebSocket, recording notifications. */
class Agent {
  constructor(bridge, name = 'vscode-suite-agent') {
    this.bridge = bridge;
    this.name = name;
    this.next = 1;
    this.waiting = new Map();
    this.notifications = [];
  }

  async connect() {
    this.ws = new WebSocket(`ws://127.0.0.1:${this.bridge.port}/`, ['mcp'], {
      headers: { 'x-claude-code-ide-authorization': this.bridge.token },
    });
    this.ws.on('message', (data) => {
      const msg = JSON.parse(data.toString());
      if (msg.id !== undefined && this.waiting.has(msg.id)) {
        this.waiting.get(msg.id)(msg);
        this.waiting.delete(msg.id);
      } else if (msg.method) {
        this.notifications.push(msg);
      }
    });
    await new Promise((resolve, reject) => {
      this.ws.once('open', resolve);
      this.ws.once('error', reject);
    });
    await this.request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: this.name, version: '1' } });
    this.ws.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    return this;
  }

  request(method, params, timeoutMs = 30000) {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${method} unanswered after ${timeoutMs} ms`)), timeoutMs);
      this.waiting.set(id, (msg) => {
        clearTimeout(timer);
        if (msg.error) reject(new Error(`${method}: ${msg.error.message}`));
        else resolve(msg.result);
      });
      this.ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    });
  }

  /** Calls a tool: `{error, text, json}` (json when the text is JSON). */
  async call(tool, args = {}, timeoutMs) {
    const result = await this.request('tools/call', { name: tool, arguments: args }, timeoutMs);
    const text = (result.content || []).map((c) => c.text || '').join('\n');
    let json;
    try {
      json = JSON.parse((result.content || [])[0]?.text ?? '');
    } catch {
      json = undefined;
    }
    return { error: result.isError === true, text, json, texts: (result.content || []).map((c) => c.text) };
  }

  /** The tool's JSON answer; fails on a tool error. */
  async ok(tool, args = {}, timeoutMs) {
    const r = await this.call(tool, args, timeoutMs);
    assert(!r.error, `${tool} failed: ${r.text}`);
    return r.json === undefined ? r.text : r.json;
  }

  /** A tool error whose text matches `pattern`, answered at once. */
  async refused(tool, args, pattern) {
    const started = Date.now();
    const r = await this.call(tool, args);
    assert(r.error, `${tool} should be refused, got ${r.text}`);
    assert(pattern.test(r.text), `${tool}: ${r.text} does not match ${pattern}`);
    assert(Date.now() - started < 3000, `${tool} took ${Date.now() - started} ms to refuse`);
    return r.text;
  }

  async notification(method, pred = () => true, timeoutMs = 10000) {
    return waitFor(() => this.notifications.find((n) => n.method === method && pred(n.params)), `${method}`, timeoutMs);
  }

  close() {
    this.ws?.close();
  }
}

/** The extension's API (it is activated by then). */
async function extension() {
  const ext = vscode.extensions.getExtension('ide-bridge.ide-bridge');
  assert(ext, 'the extension is installed');
  return ext.activate();
}

const bridge = new Bridge();
const shared = { bridge, agent: undefined };

module.exports = { Agent, Bridge, assert, bridge, extension, shared, waitFor, ws, WORKSPACE };
