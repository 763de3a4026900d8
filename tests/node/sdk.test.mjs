// Interop with the official MCP TypeScript SDK (1.x): the real bridge binary over
// streamable HTTP and through the `ide-bridge mcp` stdio relay.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';

import {
  BRIDGE_BIN,
  alive,
  HELLO,
  bridgeLogs,
  cleanup,
  listAllTools,
  makeSandbox,
  readLocks,
  startBridge,
  stopBridge,
  text,
  waitFor,
  waitForLock,
  withTimeout,
} from './helpers.mjs';

const TEST_TIMEOUT = 30_000;

function newClient(name) {
  return new Client({ name, version: '0.0.0' }, { capabilities: {} });
}

/** A stdio transport running the relay in the sandbox's project, stderr kept for failures. */
function relayTransport(sb, args) {
  const transport = new StdioClientTransport({
    command: BRIDGE_BIN,
    args,
    cwd: sb.ws,
    env: sb.env,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d) => {
    stderr += d;
  });
  transport.stderrText = () => stderr;
  return transport;
}

async function closeRelay(sb, client, transport) {
  const pid = transport.pid;
  await withTimeout(client.close(), 5_000, 'closing the stdio client').catch(() => {});
  if (pid) sb.pids.add(pid); // cleanup() makes sure it is gone
}

function assertToolSet(tools) {
  const names = tools.map((t) => t.name);
  assert.ok(names.length > 70, `expected > 70 tools, got ${names.length}`);
  assert.equal(new Set(names).size, names.length, 'tool names are unique across pages');
  for (const n of ['searchWorkspace', 'readFile', 'getWorkspaceFolders']) {
    assert.ok(names.includes(n), `${n} is listed`);
  }
  for (const t of tools) assert.equal(t.inputSchema?.type, 'object', `${t.name} has an object input schema`);
}

test('streamable HTTP: initialize, paginated tools/list, search, progress, cancel, DELETE', { timeout: TEST_TIMEOUT }, async (t) => {
  const sb = makeSandbox();
  let client;
  try {
    const bridge = await startBridge(sb);
    const authHeaders = { Authorization: `Bearer ${bridge.token}` };
    const transport = new StreamableHTTPClientTransport(bridge.url, { requestInit: { headers: authHeaders } });
    client = newClient('sdk-http-test');

    await withTimeout(client.connect(transport), 5_000, 'initialize over HTTP');
    assert.equal(transport.protocolVersion, LATEST_PROTOCOL_VERSION, 'negotiated the SDK\'s latest protocol version');
    assert.ok(transport.sessionId, 'the bridge assigned an Mcp-Session-Id');
    assert.ok(client.getServerCapabilities()?.tools, 'server advertises tools');
    const sessionId = transport.sessionId;

    await t.test('tools/list follows nextCursor to every tool', async () => {
      const { tools, pages } = await listAllTools(client);
      assertToolSet(tools);
      assert.ok(tools.some((x) => x.name === 'debug_sleep'), 'debug_sleep (fault-injection build) is listed');
      t.diagnostic(`${tools.length} tools over ${pages} page(s)`);
    });

    await t.test('searchWorkspace finds hello.txt', async () => {
      const result = await client.callTool({ name: 'searchWorkspace', arguments: { query: HELLO } });
      assert.notEqual(result.isError, true, text(result));
      const body = JSON.parse(text(result));
      assert.ok(
        body.matches.some((m) => m.path === 'hello.txt' && m.text.includes(HELLO)),
        `hello.txt among matches: ${text(result)}`,
      );
    });

    await t.test('a long tool streams progress notifications', async () => {
      const seen = [];
      const started = Date.now();
      const result = await client.callTool({ name: 'debug_sleep', arguments: { ms: 1500, steps: 5 } }, undefined, {
        onprogress: (p) => seen.push({ ...p, at: Date.now() - started }),
      });
      assert.notEqual(result.isError, true, text(result));
      assert.equal(text(result), 'slept 1500 ms');
      assert.ok(seen.length >= 2, `at least 2 progress notifications, got ${JSON.stringify(seen)}`);
      for (let i = 1; i < seen.length; i++) {
        assert.ok(seen[i].progress > seen[i - 1].progress, `progress increases: ${JSON.stringify(seen)}`);
      }
      assert.ok(seen[0].at < 1200, `the first notification arrives while the call runs (${seen[0].at} ms)`);
      assert.equal(seen.at(-1).total, 5);
    });

    await t.test('an aborted call rejects at once and the session stays usable', async () => {
      const ac = new AbortController();
      let progressed;
      const firstProgress = new Promise((r) => (progressed = r));
      const call = client.callTool({ name: 'debug_sleep', arguments: { ms: 30_000, steps: 60 } }, undefined, {
        signal: ac.signal,
        onprogress: () => progressed(),
        timeout: 60_000,
      });
      call.catch(() => {}); // observed below
      // The server is demonstrably running the call once it reports progress (every 500 ms).
      await withTimeout(firstProgress, 5_000, 'first progress of debug_sleep');
      const abortedAt = Date.now();
      ac.abort('test cancels');
      await assert.rejects(withTimeout(call, 2_000, 'the aborted call to settle'), (err) => {
        assert.doesNotMatch(String(err?.message ?? err), /took longer than/);
        return true;
      });
      assert.ok(Date.now() - abortedAt < 1_000, 'rejected within 1 s of the abort');
      const after = await withTimeout(
        client.callTool({ name: 'getWorkspaceFolders', arguments: {} }),
        5_000,
        'a call after the cancelled one',
      );
      assert.notEqual(after.isError, true, text(after));
      assert.ok(text(after).includes(sb.ws), `getWorkspaceFolders names the workspace: ${text(after)}`);
      // The bridge stopped the call (not just the client forgetting it): its activity log
      // records the debug_sleep as cancelled, long before the 30 s were up.
      const entry = await waitFor(
        async () => {
          const log = JSON.parse(text(await client.callTool({ name: 'getActivityLog', arguments: {} })));
          return log.entries.find((e) => e.tool === 'debug_sleep' && e.summary?.includes('ms=30000'));
        },
        { timeoutMs: 3_000, intervalMs: 100, what: 'the cancelled call in getActivityLog' },
      );
      assert.equal(entry.status, 'cancelled', JSON.stringify(entry));
      assert.ok(entry.durationMs < 5_000, JSON.stringify(entry));
    });

    await t.test('DELETE ends the session; its id is refused afterwards with 404', async () => {
      await transport.terminateSession();
      await client.close();
      client = undefined;
      const res = await fetch(bridge.url, {
        method: 'POST',
        headers: {
          ...authHeaders,
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
          'Mcp-Session-Id': sessionId,
          'Mcp-Protocol-Version': LATEST_PROTOCOL_VERSION,
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 99, method: 'tools/list', params: {} }),
      });
      await res.body?.cancel();
      assert.equal(res.status, 404, 'a request on a terminated session gets 404');
    });
  } catch (err) {
    t.diagnostic(bridgeLogs(sb));
    throw err;
  } finally {
    if (client) await client.close().catch(() => {});
    await cleanup(sb);
  }
});

test('stdio relay (ide-bridge mcp --no-start): initialize, tools/list, readFile', { timeout: TEST_TIMEOUT }, async (t) => {
  const sb = makeSandbox();
  const transport = relayTransport(sb, ['mcp', '--no-start']);
  const client = newClient('sdk-stdio-test');
  try {
    await startBridge(sb);
    await withTimeout(client.connect(transport), 5_000, 'initialize over stdio');
    sb.pids.add(transport.pid);
    assert.equal(client.getServerVersion()?.name, 'ide-bridge');

    const { tools } = await listAllTools(client);
    assertToolSet(tools);

    const result = await client.callTool({ name: 'readFile', arguments: { filePath: 'hello.txt' } });
    assert.notEqual(result.isError, true, text(result));
    assert.ok(text(result).includes(HELLO), `readFile returns the file: ${text(result)}`);
  } catch (err) {
    t.diagnostic(`relay stderr:\n${transport.stderrText()}\n${bridgeLogs(sb)}`);
    throw err;
  } finally {
    await closeRelay(sb, client, transport);
    await cleanup(sb);
  }
});

test('stdio relay survives a bridge restart: the first call after it succeeds', { timeout: TEST_TIMEOUT }, async (t) => {
  const sb = makeSandbox();
  const transport = relayTransport(sb, ['mcp', '--no-start']);
  const client = newClient('sdk-restart-test');
  try {
    const first = await startBridge(sb);
    await withTimeout(client.connect(transport), 5_000, 'initialize over stdio');
    sb.pids.add(transport.pid);
    const before = await client.callTool({ name: 'readFile', arguments: { filePath: 'hello.txt' } });
    assert.ok(text(before).includes(HELLO), text(before));

    const exit = await stopBridge(first);
    t.diagnostic(`first bridge exited: ${JSON.stringify(exit)}`);
    await waitFor(() => !readLocks(sb.cfg).some((l) => l.lock.pid === first.pid), {
      timeoutMs: 5_000,
      what: 'the old lock file to go',
    });

    const second = await startBridge(sb);
    t.diagnostic(`second bridge pid ${second.pid} port ${second.port} (first was port ${first.port})`);
    await waitForLock(sb.cfg, { pid: second.pid });

    const started = Date.now();
    const after = await withTimeout(
      client.callTool({ name: 'readFile', arguments: { filePath: 'hello.txt' } }),
      10_000,
      'the first call after the restart',
    );
    t.diagnostic(`first call after restart took ${Date.now() - started} ms`);
    assert.notEqual(after.isError, true, `first call after restart: ${text(after)}`);
    assert.ok(text(after).includes(HELLO), text(after));
    assert.ok(transport.pid && alive(transport.pid), 'still the same relay process');

    // Harder: the call is sent while no bridge runs; the relay holds it until one is back.
    await stopBridge(second);
    const during = client.callTool({ name: 'getWorkspaceFolders', arguments: {} });
    during.catch(() => {});
    await startBridge(sb);
    const held = await withTimeout(during, 10_000, 'a call sent while the bridge was down');
    assert.notEqual(held.isError, true, `call sent during the downtime: ${text(held)}`);
    assert.ok(text(held).includes(sb.ws), text(held));
  } catch (err) {
    t.diagnostic(`relay stderr:\n${transport.stderrText()}\n${bridgeLogs(sb)}`);
    throw err;
  } finally {
    await closeRelay(sb, client, transport);
    await cleanup(sb);
  }
});

test('stdio relay with no bridge running starts one (ide-bridge mcp)', { timeout: TEST_TIMEOUT }, async (t) => {
  const sb = makeSandbox();
  const transport = relayTransport(sb, ['mcp']);
  const client = newClient('sdk-autostart-test');
  try {
    assert.equal(readLocks(sb.cfg).length, 0, 'no bridge before the test');
    const started = Date.now();
    await withTimeout(client.connect(transport), 5_000, 'initialize with no bridge running');
    const connectMs = Date.now() - started;
    sb.pids.add(transport.pid);
    t.diagnostic(`initialize took ${connectMs} ms`);
    assert.ok(connectMs < 5_000);

    const listStarted = Date.now();
    const { tools } = await withTimeout(listAllTools(client), 10_000, 'tools/list after autostart');
    t.diagnostic(`tools/list after initialize took ${Date.now() - listStarted} ms; ${tools.length} tools`);
    assertToolSet(tools);

    const { lock } = await waitForLock(sb.cfg);
    sb.pids.add(lock.pid); // the relay's bridge is detached: cleanup() kills it by pid
    assert.deepEqual(lock.workspaceFolders, [sb.ws], 'the started bridge serves the project');

    const result = await client.callTool({ name: 'readFile', arguments: { filePath: path.join(sb.ws, 'hello.txt') } });
    assert.ok(text(result).includes(HELLO), text(result));
  } catch (err) {
    t.diagnostic(`relay stderr:\n${transport.stderrText()}\n${bridgeLogs(sb)}`);
    throw err;
  } finally {
    await closeRelay(sb, client, transport);
    await cleanup(sb);
  }
});
