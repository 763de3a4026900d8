'use strict';
const { Agent, assert, bridge, extension, shared, waitFor } = require('./bridge');
const { test } = require('./runner');

test('after the bridge restarts the extension is back within 5 s', async () => {
  const api = await extension();
  shared.agent.close();
  await bridge.stop();
  await waitFor(() => api.state() !== 'connected', 'the extension to notice');
  await bridge.start();
  const started = Date.now();
  await api.connected(5000);
  await waitFor(async () => (await bridge.status()).extension.connected, 'the bridge to see the editor', 5000);
  assert(Date.now() - started < 5000, `back after ${Date.now() - started} ms`);
  shared.agent = await new Agent(bridge).connect();
  const r = await shared.agent.ok('getWorkspaceFolders');
  assert(r.folders.length === 1, JSON.stringify(r));
});
