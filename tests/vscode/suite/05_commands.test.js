'use strict';
const vscode = require('vscode');
const { assert, shared, ws } = require('./bridge');
const { test } = require('./runner');

test('"Send Selection to Agent" sends an @-mention with the selected lines', async () => {
  const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(ws('src/shapes.ts')));
  const editor = await vscode.window.showTextDocument(doc, { preview: false });
  editor.selection = new vscode.Selection(new vscode.Position(5, 0), new vscode.Position(10, 1));
  await vscode.commands.executeCommand('ideBridge.sendSelection');
  const n = await shared.agent.notification('at_mentioned', (p) => p.lineStart === 5);
  assert(n.params.filePath === ws('src/shapes.ts') && n.params.lineEnd === 10, JSON.stringify(n.params));
  await vscode.commands.executeCommand('ideBridge.sendFile');
  const f = await shared.agent.notification('at_mentioned', (p) => p.lineStart === undefined);
  assert(f.params.filePath === ws('src/shapes.ts'), JSON.stringify(f.params));
});
