'use strict';
const vscode = require('vscode');
const { Agent, assert, bridge, shared, waitFor, ws } = require('./bridge');
const { test } = require('./runner');

async function showShapes() {
  const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(ws('src/shapes.ts')));
  return vscode.window.showTextDocument(doc, { preview: false });
}

test('"Send Selection to Agent" sends an @-mention with the selected lines', async () => {
  const editor = await showShapes();
  editor.selection = new vscode.Selection(new vscode.Position(5, 0), new vscode.Position(10, 1));
  await vscode.commands.executeCommand('ideBridge.sendSelection');
  const n = await shared.agent.notification('at_mentioned', (p) => p.lineStart === 5);
  assert(n.params.filePath === ws('src/shapes.ts') && n.params.lineEnd === 10, JSON.stringify(n.params));
  await vscode.commands.executeCommand('ideBridge.sendFile');
  const f = await shared.agent.notification('at_mentioned', (p) => p.lineStart === undefined);
  assert(f.params.filePath === ws('src/shapes.ts'), JSON.stringify(f.params));
});

test('with two agents the user picks which one gets the mention', async () => {
  const second = await new Agent(bridge, 'second-agent').connect();
  try {
    const sessions = await waitFor(async () => {
      const s = (await bridge.status()).sessions.filter((x) => x.connected && x.initialized);
      return s.length === 2 ? s : undefined;
    }, 'two listening agents');
    const editor = await showShapes();
    editor.selection = new vscode.Selection(new vscode.Position(12, 0), new vscode.Position(14, 1));
    shared.agent.notifications.length = 0;
    const sending = vscode.commands.executeCommand('ideBridge.sendSelection');
    // The quick pick lists "All agents" then each agent, in /status order: the user
    // moves down once and accepts the first agent. It shows once the extension has
    // asked the bridge for its agents; VS Code has no event for a quick pick opening.
    await new Promise((r) => setTimeout(r, 700));
    await vscode.commands.executeCommand('workbench.action.quickOpenSelectNext');
    await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
    await sending;
    const [picked, other] = /^second-agent/.test(sessions[0].client) ? [second, shared.agent] : [shared.agent, second];
    const n = await picked.notification('at_mentioned', (p) => p.lineStart === 12);
    assert(n.params.lineEnd === 14 && !('sessionId' in n.params), JSON.stringify(n.params));
    // The other agent never gets it (a later notification would have arrived by now).
    await shared.agent.ok('getWorkspaceFolders');
    assert(!other.notifications.some((x) => x.method === 'at_mentioned'), `${other.name} got it too`);
  } finally {
    second.close();
  }
});

test('"Open the Bridge\'s Page" gives a one-time link that signs a browser in', async () => {
  // code-server is a web window: the link is shown (to copy), not sent through its proxy.
  const url = await vscode.commands.executeCommand('ideBridge.openDashboard');
  assert(typeof url === 'string' && url.startsWith(`http://127.0.0.1:${bridge.port}/ui/login#`), String(url));
  const code = url.split('#')[1];
  const origin = `http://127.0.0.1:${bridge.port}`;
  const answer = await new Promise((resolve, reject) => {
    const req = require('http').request(
      { host: '127.0.0.1', port: bridge.port, method: 'POST', path: '/ui/login', headers: { Origin: origin, 'Content-Type': 'application/json' } },
      (res) => resolve({ status: res.statusCode, cookie: res.headers['set-cookie'] }),
    );
    req.on('error', reject);
    req.end(JSON.stringify({ code }));
  });
  assert(answer.status === 200 && String(answer.cookie).includes('HttpOnly'), JSON.stringify(answer));
});
