// Shared fixtures for the Node interop tests: temp dirs, starting/stopping the real
// bridge binary (BRIDGE_BIN), reading its lock file, polling with deadlines.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

if (!process.env.BRIDGE_BIN) {
  throw new Error('BRIDGE_BIN must name the ide-bridge binary to test');
}
// Absolute: the bridge and the relay are started with the workspace as their cwd.
export const BRIDGE_BIN = path.resolve(process.env.BRIDGE_BIN);

export const HELLO = 'hello from the workspace';
export const HERE = path.dirname(fileURLToPath(import.meta.url));

/** Resolves once `check()` returns a truthy value; fails after `timeoutMs`. */
export async function waitFor(check, { timeoutMs = 10_000, intervalMs = 50, what = 'condition' } = {}) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** Rejects if `promise` does not settle within `ms`. */
export function withTimeout(promise, ms, what) {
  let timer;
  return Promise.race([
    promise,
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/**
 * A fresh sandbox: <base>/cfg (CLAUDE_CONFIG_DIR), <base>/home (HOME) and a project
 * <base>/ws with .git/ and hello.txt. `env` is what every process of the test gets.
 */
export function makeSandbox(prefix = 'ide-bridge-node-') {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  const cfg = path.join(base, 'cfg');
  const home = path.join(base, 'home');
  const ws = path.join(base, 'ws');
  for (const d of [cfg, home, path.join(ws, '.git')]) fs.mkdirSync(d, { recursive: true });
  fs.writeFileSync(path.join(ws, 'hello.txt'), HELLO);
  const env = { ...process.env, CLAUDE_CONFIG_DIR: cfg, HOME: home };
  // Nothing of an outer Claude Code / bridge session may leak into the one under test.
  for (const k of Object.keys(env)) {
    if (/^(CLAUDE_CODE_|IDE_BRIDGE_|ENABLE_IDE_INTEGRATION)/.test(k)) delete env[k];
  }
  env.RUST_LOG = env.RUST_LOG ?? 'info';
  return { base, cfg, home, ws, env, pids: new Set(), children: [] };
}

/** Every parseable bridge lock file under <cfg>/ide: [{port, lock, file}]. */
export function readLocks(cfg) {
  const dir = path.join(cfg, 'ide');
  let names = [];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return [];
  }
  const out = [];
  for (const name of names) {
    if (!name.endsWith('.lock')) continue;
    const file = path.join(dir, name);
    try {
      const lock = JSON.parse(fs.readFileSync(file, 'utf8'));
      out.push({ port: Number(name.slice(0, -'.lock'.length)), lock, file });
    } catch {
      // being written: try again on the next poll
    }
  }
  return out;
}

/** Waits for a bridge lock file (optionally the one written by `pid`). */
export function waitForLock(cfg, { pid, timeoutMs = 10_000 } = {}) {
  return waitFor(
    () => readLocks(cfg).find((l) => l.lock.isBridge === true && l.lock.authToken && (pid === undefined || l.lock.pid === pid)),
    { timeoutMs, what: `a bridge lock file in ${cfg}/ide${pid ? ` with pid ${pid}` : ''}` },
  );
}

/** True while `pid` is a live (not zombie) process. */
export function alive(pid) {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return true;
  }
}

/** SIGTERM, wait up to `graceMs`, then SIGKILL. Resolves once `pid` is gone. */
export async function stopPid(pid, graceMs = 5_000) {
  if (!pid || !alive(pid)) return;
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return;
  }
  try {
    await waitFor(() => !alive(pid), { timeoutMs: graceMs, intervalMs: 25, what: `pid ${pid} to exit` });
  } catch {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {}
    await waitFor(() => !alive(pid), { timeoutMs: 2_000, intervalMs: 25, what: `pid ${pid} to die` }).catch(() => {});
  }
}

/**
 * Starts `BRIDGE_BIN --workspace <ws>` in the sandbox and waits for its lock file.
 * Returns { child, pid, port, token, url, lock }.
 */
export async function startBridge(sb, { timeoutMs = 10_000 } = {}) {
  const log = fs.openSync(path.join(sb.base, `bridge-${sb.children.length}.log`), 'a');
  const child = spawn(BRIDGE_BIN, ['--workspace', sb.ws], {
    cwd: sb.ws,
    env: sb.env,
    stdio: ['ignore', log, log],
  });
  fs.closeSync(log);
  sb.children.push(child);
  sb.pids.add(child.pid);
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  child.exited = exited;
  const found = await Promise.race([
    waitForLock(sb.cfg, { pid: child.pid, timeoutMs }),
    exited.then(({ code, signal }) => {
      throw new Error(`bridge exited early (code ${code}, signal ${signal}); log:\n${bridgeLogs(sb)}`);
    }),
  ]);
  return {
    child,
    pid: child.pid,
    port: found.port,
    token: found.lock.authToken,
    url: new URL(`http://127.0.0.1:${found.port}/mcp`),
    lock: found.lock,
    lockFile: found.file,
  };
}

/** SIGTERM a bridge this test started and wait for it to exit. */
export async function stopBridge(bridge, timeoutMs = 5_000) {
  if (bridge.child.exitCode !== null || bridge.child.signalCode !== null) return bridge.child.exited;
  bridge.child.kill('SIGTERM');
  return withTimeout(bridge.child.exited, timeoutMs, `bridge pid ${bridge.pid} exiting on SIGTERM`);
}

export function bridgeLogs(sb) {
  return fs
    .readdirSync(sb.base)
    .filter((n) => n.endsWith('.log'))
    .map((n) => `--- ${n}\n${fs.readFileSync(path.join(sb.base, n), 'utf8').slice(-4000)}`)
    .join('\n');
}

/**
 * Kills every process the sandbox knows of (the bridges it started and the pid of
 * every bridge lock file under its own CLAUDE_CONFIG_DIR), then removes its dirs.
 */
export async function cleanup(sb) {
  for (const { lock } of readLocks(sb.cfg)) if (lock.pid) sb.pids.add(lock.pid);
  await Promise.all([...sb.pids].map((pid) => stopPid(pid)));
  if (!process.env.KEEP_TMP) fs.rmSync(sb.base, { recursive: true, force: true });
}

/** Every tool, following nextCursor. */
export async function listAllTools(client) {
  const tools = [];
  let cursor;
  let pages = 0;
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor });
    tools.push(...page.tools);
    cursor = page.nextCursor;
    pages += 1;
    if (pages > 50) throw new Error('tools/list pagination does not end');
  } while (cursor !== undefined && cursor !== null);
  return { tools, pages };
}

/** The text of a CallToolResult's first text content. */
export function text(result) {
  const item = (result.content ?? []).find((c) => c.type === 'text');
  return item ? item.text : undefined;
}
