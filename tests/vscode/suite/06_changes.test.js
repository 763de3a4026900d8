'use strict';
// What agents changed (bridge/agentChanges): with VS Code connected, the bridge's write
// tools are done by VS Code (the document edited and saved, a file created), and the
// lines each agent wrote come back as runs with the agent's name (the extension marks
// them in the gutter); an undo on the bridge reloads the unmodified document and takes
// its runs away, and so does a keep.
const fs = require('fs');
const path = require('path');
const vscode = require('vscode');
const { Agent, assert, bridge, extension, shared, waitFor, ws } = require('./bridge');
const { test } = require('./runner');

const TEXT = 'one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n';

/** `runs` as `from-to agent session` strings (the order the bridge sent them). */
function describe(runs) {
  return runs.map((r) => `${r.startLine}-${r.endLine} ${r.agent} ${r.session}`).join('; ');
}

test('an agent\'s write through VS Code comes back as its runs, and an undo or a keep takes them away', async () => {
  const api = await extension();
  const file = ws('review', 'changes.txt');
  const created = ws('review', 'created.txt');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, TEXT);
  const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(file));
  await vscode.window.showTextDocument(doc, { preview: false });
  const writer = await new Agent(bridge, 'changes-writer').connect();
  try {
    // replaceBlock is done by VS Code: the document is edited and saved.
    const r = await writer.ok('replaceBlock', { filePath: file, oldContent: 'three\nfour', newContent: 'THREE\nFOUR\nand more' });
    assert(r.source === 'editor' && r.saved === true, JSON.stringify(r));
    const after = TEXT.replace('three\nfour', 'THREE\nFOUR\nand more');
    assert(fs.readFileSync(file, 'utf8') === after, fs.readFileSync(file, 'utf8'));
    assert(doc.getText() === after && !doc.isDirty, doc.getText());
    const listed = await waitFor(async () => (await writer.ok('listChanges', { file: 'review/changes.txt' })).changes[0], 'the change set');
    assert(/^changes-writer /.test(listed.agent) && listed.tool === 'replaceBlock', JSON.stringify(listed));
    const expected = `3-5 ${listed.agent} ${listed.session}`;
    await waitFor(() => describe(api.agentChanges(file)) === expected, `the run ${expected} (the extension has "${describe(api.agentChanges(file))}")`);

    // createFile is done by VS Code too: every line of the new file is the agent's.
    const made = await writer.ok('createFile', { filePath: created, content: 'x\ny\n' });
    assert(made.source === 'editor' && made.created === true, JSON.stringify(made));
    const whole = `1-2 ${listed.agent} ${listed.session}`;
    await waitFor(() => describe(api.agentChanges(created)) === whole, `the run ${whole} (the extension has "${describe(api.agentChanges(created))}")`);

    // Undone on the bridge: the file is written there, VS Code reloads the unmodified
    // document, and the runs go.
    const report = await shared.agent.ok('undoChanges', { change: listed.id, reason: 'not those lines' });
    assert(report.undone.length === 1 && report.undone[0].from === 3 && report.declined.length === 0, JSON.stringify(report));
    assert(fs.readFileSync(file, 'utf8') === TEXT, fs.readFileSync(file, 'utf8'));
    await waitFor(() => api.agentChanges(file).length === 0, `no run left (the extension has "${describe(api.agentChanges(file))}")`);
    await waitFor(() => doc.getText() === TEXT, `the document to reload the undone text (it holds ${JSON.stringify(doc.getText())})`);
    assert(!doc.isDirty, 'the reloaded document is not dirty');

    // Kept: the created file's runs go; the file stays as the agent wrote it.
    const kept = await shared.agent.ok('keepChanges', { file: 'review/created.txt' });
    assert(kept.kept === 1, JSON.stringify(kept));
    await waitFor(() => api.agentChanges(created).length === 0, `no run left in created.txt (the extension has "${describe(api.agentChanges(created))}")`);
    assert(fs.readFileSync(created, 'utf8') === 'x\ny\n', fs.readFileSync(created, 'utf8'));
  } finally {
    writer.close();
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  }
});
