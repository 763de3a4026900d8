'use strict';
const { assert, bridge, extension, waitFor } = require('./bridge');
const { test } = require('./runner');

const WebSocket = require(process.env.SUITE_WS_MODULE);

test('another editor taking the bridge leaves this window standing by until it leaves', async () => {
  const api = await extension();
  await api.connected(15000);
  // Another editor window connects on the editor socket: it replaces this one.
  const other = new WebSocket(`ws://127.0.0.1:${bridge.port}/`, { headers: { 'x-claude-ide-extension': bridge.token } });
  await new Promise((resolve, reject) => {
    other.once('open', resolve);
    other.once('error', reject);
  });
  other.send(JSON.stringify({ jsonrpc: '2.0', method: 'extension/hello', params: { extensionVersion: 'other', packageVersion: 'other 1' } }));
  await waitFor(() => api.state() === 'standby', `the extension to stand by (state ${api.state()})`);
  await waitFor(() => /debug-pause/.test(api.statusText()), `the status bar to say so (it says "${api.statusText()}")`);
  const held = (await waitFor(async () => {
    const s = await bridge.status();
    return s.extension.hello?.extensionVersion === 'other' ? s : undefined;
  }, 'the other editor in /status')).extension.connectedAt;
  // It does not take the bridge back by itself (it asks /status every 2 s).
  const until = Date.now() + 4500;
  while (Date.now() < until) {
    const s = await bridge.status();
    assert(s.extension.connectedAt === held && s.extension.hello?.extensionVersion === 'other', JSON.stringify(s.extension));
    assert(api.state() === 'standby', `state ${api.state()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  // Once the other leaves, this window connects again.
  other.close();
  await api.connected(10000);
  await waitFor(async () => (await bridge.status()).extension.hello?.extensionVersion !== 'other', 'this window back in /status');
});
