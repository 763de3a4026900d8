// Interop with the MCP Inspector CLI (npm @modelcontextprotocol/inspector, `--cli`
// mode; built on the MCP TypeScript SDK 2.x client): tools/list and tools/call against
// the real bridge over stdio (the `ide-bridge mcp` relay) and over streamable HTTP.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import { BRIDGE_BIN, HELLO, HERE, bridgeLogs, cleanup, makeSandbox, startBridge } from './helpers.mjs';

const INSPECTOR = fs.realpathSync(path.join(HERE, 'node_modules', '.bin', 'mcp-inspector'));
const TEST_TIMEOUT = 30_000;

/** Runs the Inspector CLI; resolves { code, stdout, stderr } (never rejects on exit code). */
function inspector(args, { cwd, env, timeoutMs = 15_000 }) {
  return new Promise((resolve, reject) => {
    const child = execFile(
      process.execPath,
      [INSPECTOR, '--cli', ...args],
      { cwd, env, timeout: timeoutMs, killSignal: 'SIGKILL', maxBuffer: 32 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (err && err.killed) {
          reject(new Error(`inspector ${args.join(' ')} timed out after ${timeoutMs} ms\n${stderr}`));
          return;
        }
        resolve({ code: err ? err.code : 0, stdout, stderr, pid: child.pid });
      },
    );
  });
}

function assertToolList(run) {
  assert.equal(run.code, 0, `inspector exit code; stderr:\n${run.stderr}`);
  assert.ok(run.stdout.includes('searchWorkspace'), 'output names searchWorkspace');
  const { tools } = JSON.parse(run.stdout);
  const names = tools.map((t) => t.name);
  assert.ok(names.length > 70, `expected > 70 tools (all pages), got ${names.length}`);
  assert.equal(new Set(names).size, names.length, 'no duplicates');
  assert.ok(names.includes('readFile'));
  return names;
}

test('Inspector CLI lists the tools over stdio (ide-bridge mcp --no-start)', { timeout: TEST_TIMEOUT }, async (t) => {
  const sb = makeSandbox();
  try {
    await startBridge(sb);
    // The SDK's stdio transport passes the server only a safe subset of the environment
    // (HOME, PATH, ...), so CLAUDE_CONFIG_DIR has to be given with -e.
    const run = await inspector(
      ['-e', `CLAUDE_CONFIG_DIR=${sb.cfg}`, BRIDGE_BIN, 'mcp', '--no-start', '--method', 'tools/list'],
      { cwd: sb.ws, env: sb.env },
    );
    const names = assertToolList(run);
    t.diagnostic(`${names.length} tools; inspector stderr: ${run.stderr.trim()}`);

    const call = await inspector(
      [
        '-e', `CLAUDE_CONFIG_DIR=${sb.cfg}`, BRIDGE_BIN, 'mcp', '--no-start',
        '--method', 'tools/call', '--tool-name', 'readFile', '--tool-arg', 'filePath=hello.txt',
      ],
      { cwd: sb.ws, env: sb.env },
    );
    assert.equal(call.code, 0, call.stderr);
    const result = JSON.parse(call.stdout);
    assert.notEqual(result.isError, true, call.stdout);
    assert.ok(result.content[0].text.includes(HELLO), call.stdout);
  } catch (err) {
    t.diagnostic(bridgeLogs(sb));
    throw err;
  } finally {
    await cleanup(sb);
  }
});

test('Inspector CLI lists the tools over streamable HTTP with a bearer header', { timeout: TEST_TIMEOUT }, async (t) => {
  const sb = makeSandbox();
  try {
    const bridge = await startBridge(sb);
    const target = [bridge.url.href, '--transport', 'http'];
    const auth = ['--header', `Authorization: Bearer ${bridge.token}`];

    const run = await inspector([...target, ...auth, '--method', 'tools/list'], { cwd: sb.base, env: sb.env });
    const names = assertToolList(run);
    t.diagnostic(`${names.length} tools; inspector stderr: ${run.stderr.trim()}`);

    const call = await inspector(
      [...target, ...auth, '--method', 'tools/call', '--tool-name', 'searchWorkspace', '--tool-arg', 'query=hello from'],
      { cwd: sb.base, env: sb.env },
    );
    assert.equal(call.code, 0, call.stderr);
    const result = JSON.parse(call.stdout);
    assert.notEqual(result.isError, true, call.stdout);
    const body = JSON.parse(result.content[0].text);
    assert.ok(body.matches.some((m) => m.path === 'hello.txt'), call.stdout);

    const refused = await inspector([...target, '--method', 'tools/list'], { cwd: sb.base, env: sb.env });
    assert.notEqual(refused.code, 0, 'without the bearer header the bridge refuses the Inspector');
    assert.doesNotMatch(refused.stdout, /searchWorkspace/);
    t.diagnostic(`without a token: exit ${refused.code}: ${refused.stderr.trim().split('\n')[0]}`);
  } catch (err) {
    t.diagnostic(bridgeLogs(sb));
    throw err;
  } finally {
    await cleanup(sb);
  }
});
