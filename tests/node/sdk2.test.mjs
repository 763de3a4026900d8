// Interop with the official MCP TypeScript client 2.x (@modelcontextprotocol/client):
// the real bridge over streamable HTTP and through the `ide-bridge mcp` stdio relay, in
// MCP 2026-07-28 (it asks server/discover first) and in the handshake revision. In
// each: every tool across all pages, a typed tool whose structuredContent the client
// checks against its outputSchema, and a workspace file read as a resource.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

import { BRIDGE_BIN, cleanup, listAllTools, makeSandbox, startBridge, withTimeout } from './helpers.mjs';

const TEST_TIMEOUT = 30_000;

const transports = {
  http: (sb, bridge) =>
    new StreamableHTTPClientTransport(bridge.url, {
      requestInit: { headers: { Authorization: `Bearer ${bridge.token}` } },
    }),
  relay: (sb) => new StdioClientTransport({ command: BRIDGE_BIN, args: ['mcp'], cwd: sb.ws, env: sb.env, stderr: 'pipe' }),
};

for (const [mode, version] of [
  ['auto', '2026-07-28'],
  ['legacy', '2025-11-25'],
]) {
  for (const [kind, transportFor] of Object.entries(transports)) {
    test(`TypeScript client 2.x over ${kind}, ${mode} negotiation: ${version}`, { timeout: TEST_TIMEOUT }, async () => {
      const sb = makeSandbox();
      try {
        const bridge = await startBridge(sb);
        fs.writeFileSync(path.join(sb.ws, 'notes.md'), '# notes\n');
        const client = new Client(
          { name: `ts2-${kind}-${mode}`, version: '0.0.0' },
          { capabilities: {}, versionNegotiation: { mode } },
        );
        await withTimeout(client.connect(transportFor(sb, bridge)), 10_000, 'connecting');
        try {
          assert.equal(client.getNegotiatedProtocolVersion(), version);
          assert.equal(client.getServerVersion()?.name, 'ide-bridge');

          // (The 2.x client follows nextCursor itself: one call returns every page.)
          const { tools } = await listAllTools(client);
          assert.ok(tools.length > 70 && new Set(tools.map((t) => t.name)).size === tools.length, `${tools.length} tools`);
          assert.ok(tools.find((t) => t.name === 'listClaims')?.outputSchema, 'listClaims has an outputSchema');
          const claims = await client.callTool({ name: 'listClaims', arguments: {} });
          assert.ok(!claims.isError, JSON.stringify(claims));
          assert.ok(Array.isArray(claims.structuredContent?.claims), JSON.stringify(claims.structuredContent));

          const uri = `file://${sb.ws}/notes.md`;
          const read = await client.readResource({ uri });
          assert.equal(read.contents[0].text, '# notes\n');
          assert.equal(read.contents[0].mimeType, 'text/markdown');
        } finally {
          await withTimeout(client.close(), 5_000, 'closing').catch(() => {});
        }
      } finally {
        await cleanup(sb);
      }
    });
  }
}
