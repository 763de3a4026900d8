'use strict';
const fs = require('fs');
const path = require('path');
const vscode = require('vscode');
const { Agent, assert, bridge, extension, shared, waitFor, WORKSPACE } = require('./bridge');
const { after, test } = require('./runner');

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

/** The pid of the bridge a lock file names for the workspace. */
function lockedPid() {
  const dir = path.join(process.env.CLAUDE_CONFIG_DIR, 'ide');
  for (const name of fs.existsSync(dir) ? fs.readdirSync(dir) : []) {
    if (!/^\d+\.lock$/.test(name)) continue;
    try {
      const lock = JSON.parse(fs.readFileSync(path.join(dir, name), 'utf8'));
      if (lock.workspaceFolders.includes(WORKSPACE)) return lock.pid;
    } catch {
      // being written
    }
  }
  return undefined;
}

let started;
after(() => {
  if (started) process.kill(started, 'SIGTERM');
});

test('with no bridge running, "Start a Bridge" starts one (ideBridge.bridgePath) and connects', async () => {
  const api = await extension();
  shared.agent.close();
  await bridge.stop();
  await waitFor(() => api.state() === 'searching', 'the extension to look for a bridge');
  await vscode.workspace.getConfiguration('ideBridge').update('bridgePath', process.env.BRIDGE_BIN, vscode.ConfigurationTarget.Global);
  assert(await vscode.commands.executeCommand('ideBridge.startBridge') !== false, 'the command started it');
  await api.connected(10000);
  started = await waitFor(() => lockedPid(), 'the new bridge\'s lock file');
  assert(started !== bridge.proc.pid, 'a bridge the extension started');
});
