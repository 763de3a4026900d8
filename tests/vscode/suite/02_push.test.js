'use strict';
const vscode = require('vscode');
const { assert, shared, waitFor, ws } = require('./bridge');
const { test } = require('./runner');

async function show(rel) {
  const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(ws(rel)));
  return vscode.window.showTextDocument(doc, { preview: false });
}

test('a selection reaches an agent as selection_changed, 0-based', async () => {
  const editor = await show('src/shapes.ts');
  // Select "Circle" on line 6 (1-based), as a user would with the mouse.
  editor.selection = new vscode.Selection(new vscode.Position(5, 13), new vscode.Position(5, 19));
  const n = await shared.agent.notification('selection_changed', (p) => p.text === 'Circle');
  assert(n.params.filePath === ws('src/shapes.ts'), JSON.stringify(n.params));
  const s = n.params.selection;
  assert(s.start.line === 5 && s.start.character === 13 && s.end.line === 5 && s.end.character === 19, JSON.stringify(s));
  // And getCurrentSelection answers the same from the bridge's cache.
  const current = await shared.agent.ok('getCurrentSelection');
  assert(current.text === 'Circle' && current.filePath === ws('src/shapes.ts'), JSON.stringify(current));
});

test('diagnostics of the built-in TypeScript support reach an agent', async () => {
  await show('src/broken.ts');
  const uri = vscode.Uri.file(ws('src/broken.ts'));
  await waitFor(() => vscode.languages.getDiagnostics(uri).length > 0, 'TypeScript diagnostics in the editor', 60000, 200);
  const found = await waitFor(async () => {
    const r = await shared.agent.ok('getDiagnostics', { uri: uri.toString() });
    const list = r.flatMap((f) => f.diagnostics);
    return list.find((d) => /not assignable to type 'number'/.test(d.message));
  }, 'the diagnostic through the bridge', 15000, 200);
  assert(found.severity === 'Error', JSON.stringify(found));
  assert(found.range.start.line === 0, JSON.stringify(found.range));
});

test('AI comments in open documents reach the bridge', async () => {
  await show('src/main.ts');
  const comments = await waitFor(async () => {
    const r = await shared.agent.ok('getAIComments');
    return (Array.isArray(r) ? r : r.comments || []).find((c) => c.file === ws('src/main.ts'));
  }, 'the AI comment', 10000, 200);
  assert(comments.comment === 'print the radius too' && comments.line === 4, JSON.stringify(comments));
});
