'use strict';
const { Agent, assert, bridge, extension, shared, waitFor } = require('./bridge');
const { before, after, test } = require('./runner');

before(async () => {
  await bridge.start();
  shared.agent = await new Agent(bridge).connect();
});

after(async () => {
  shared.agent?.close();
  await bridge.stop();
});

test('the extension finds the bridge, connects with the token and says hello', async () => {
  const api = await extension();
  await api.connected(15000);
  assert(api.port() === bridge.port, `connected to port ${api.port()}, the bridge is on ${bridge.port}`);
  const status = await waitFor(async () => {
    const s = await bridge.status();
    return s.extension.connected && s.extension.hello ? s : undefined;
  }, 'the hello in /status');
  const pkg = require('../../../editors/vscode/package.json');
  assert(status.extension.hello.extensionVersion === pkg.version, JSON.stringify(status.extension.hello));
  assert(/^vscode /.test(status.extension.hello.packageVersion), JSON.stringify(status.extension.hello));
});

test('the status bar says connected and how many agents', async () => {
  const api = await extension();
  await waitFor(() => /ide-bridge: 1 agent$/.test(api.statusText()), `"1 agent" in the status bar (it says "${api.statusText()}")`);
  const second = await new Agent(bridge).connect();
  try {
    await waitFor(() => /ide-bridge: 2 agents$/.test(api.statusText()), `"2 agents" (it says "${api.statusText()}")`);
  } finally {
    second.close();
  }
});

// The protocol's 52 methods (seed 000 and docs/protocol.md) and openDiff.
const PROTOCOL = `goToDefinition findReferences getHover getCodeActions applyCodeAction renameSymbol searchSymbols
getDocumentSymbols getCallHierarchy listTerminals getTerminalOutput createTerminal disposeTerminal sendTerminalCommand
executeInTerminal waitForTerminalOutput getDebugState evaluateInDebugger setDebugBreakpoints startDebugging stopDebugging
getOpenFiles isDirty openFile saveFile closeTab getFileContent createFile deleteFile renameFile getWorkspaceFolders
editText replaceBlock formatDocument fixAllLintErrors organizeImports getDiagnostics getSelection getAIComments watchFiles
unwatchFiles setDecorations clearDecorations readClipboard writeClipboard getInlayHints getTypeHierarchy
getWorkspaceSettings setWorkspaceSetting executeVSCodeCommand listVSCodeCommands captureScreenshot openDiff`.split(/\s+/);

test('the extension has a handler for each of the 52 protocol methods and openDiff', async () => {
  const api = await extension();
  const methods = new Set(api.methods());
  const missing = PROTOCOL.filter((m) => !methods.has(m));
  assert(PROTOCOL.length === 53, `the list holds ${PROTOCOL.length}`);
  assert(missing.length === 0, `no handler for ${missing.join(', ')}`);
});

test('file claims show in the status bar, and whose claim covers the open file', async () => {
  const api = await extension();
  const vscode = require('vscode');
  const path = require('path');
  const fs = require('fs');
  const file = path.join(require('./bridge').WORKSPACE, 'claimed.txt');
  fs.writeFileSync(file, 'x\n');
  const holder = await new Agent(bridge, 'holder').connect();
  try {
    const claimed = await holder.call('claimFiles', { paths: ['claimed.txt'], reason: 'rewriting it' });
    assert(!claimed.isError, JSON.stringify(claimed));
    await waitFor(() => /1 claim$/.test(api.statusText()), `"1 claim" in the status bar (it says "${api.statusText()}")`);
    await vscode.window.showTextDocument(vscode.Uri.file(file));
    await waitFor(() => /claimed by agent holder /.test(api.statusText()), `the open file's holder (it says "${api.statusText()}")`);
    await holder.call('releaseFiles', {});
    await waitFor(() => !/claim/.test(api.statusText()), `no claim (it says "${api.statusText()}")`);
  } finally {
    holder.close();
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  }
});
