'use strict';
const vscode = require('vscode');
const { assert, shared, waitFor, ws } = require('./bridge');
const { test } = require('./runner');

/** The open diff whose proposal is in `tab`'s title, if any. */
function diffTab(tabName) {
  return vscode.window.tabGroups.all
    .flatMap((g) => g.tabs)
    .find((t) => t.input instanceof vscode.TabInputTextDiff && t.label.includes(tabName));
}

function openDiff(tab, contents) {
  return shared.agent.call('openDiff', {
    old_file_path: ws('notes.txt'),
    new_file_path: ws('notes.txt'),
    new_file_contents: contents,
    tab_name: tab,
  }, 20000);
}

/** Closes the diff's tab as the user would; VS Code replaces a Tab object when its state
 * changes, so the current one is looked up each time. */
async function closeTab(tabName) {
  await waitFor(async () => {
    const tab = diffTab(tabName);
    if (!tab) return true;
    await vscode.window.tabGroups.close(tab);
    return !diffTab(tabName);
  }, `the tab of ${tabName} to close`);
}

test('openDiff shows the native diff; the user edits the proposal and accepts', async () => {
  const answer = openDiff('edit-notes', 'alpha\nbeta, proposed\ngamma\n');
  const tab = await waitFor(() => diffTab('edit-notes'), 'the diff tab');
  const proposed = tab.input.modified;
  assert(tab.input.original.fsPath === ws('notes.txt'), tab.input.original.toString());
  // The user changes the proposal in the diff editor before accepting it.
  const doc = await vscode.workspace.openTextDocument(proposed);
  assert(doc.getText() === 'alpha\nbeta, proposed\ngamma\n', doc.getText());
  const edit = new vscode.WorkspaceEdit();
  edit.replace(proposed, doc.lineAt(1).range, 'beta, edited by the user');
  assert(await vscode.workspace.applyEdit(edit), 'the edit applies');
  await vscode.commands.executeCommand('ideBridge.acceptDiff', proposed);
  const r = await answer;
  assert(!r.error, r.text);
  assert(r.texts[0] === 'FILE_SAVED' && r.texts[1] === 'alpha\nbeta, edited by the user\ngamma\n', JSON.stringify(r.texts));
  await waitFor(() => !diffTab('edit-notes'), 'the diff tab to close');
  // The agent writes the file; the extension does not.
  assert(require('fs').readFileSync(ws('notes.txt'), 'utf8') === 'alpha\nbeta\ngamma\n', 'the file is unchanged');
});

test('rejecting, or closing the diff, answers DIFF_REJECTED', async () => {
  let answer = openDiff('reject-me', 'nope\n');
  let tab = await waitFor(() => diffTab('reject-me'), 'the diff tab');
  await vscode.commands.executeCommand('ideBridge.rejectDiff', tab.input.modified);
  let r = await answer;
  assert(r.texts[0] === 'DIFF_REJECTED' && r.texts[1] === 'reject-me', JSON.stringify(r.texts));
  answer = openDiff('close-me', 'nope\n');
  await waitFor(() => diffTab('close-me'), 'the diff tab');
  await closeTab('close-me');
  r = await answer;
  assert(r.texts[0] === 'DIFF_REJECTED' && r.texts[1] === 'close-me', JSON.stringify(r.texts));
});

test('saving the proposal accepts it; the agent closing its tab withdraws a diff', async () => {
  let answer = openDiff('save-me', 'alpha\nsaved\n');
  let tab = await waitFor(() => diffTab('save-me'), 'the diff tab');
  const doc = await vscode.workspace.openTextDocument(tab.input.modified);
  await vscode.window.showTextDocument(doc);
  await vscode.commands.executeCommand('workbench.action.files.save');
  let r = await answer;
  assert(r.texts[0] === 'FILE_SAVED' && r.texts[1] === 'alpha\nsaved\n', JSON.stringify(r.texts));
  answer = openDiff('withdrawn', 'x\n');
  tab = await waitFor(() => diffTab('withdrawn'), 'the diff tab');
  const closed = await shared.agent.call('close_tab', { tab_name: 'withdrawn' });
  assert(closed.texts[0] === 'TAB_CLOSED', closed.text);
  r = await answer;
  assert(r.texts[0] === 'DIFF_REJECTED', JSON.stringify(r.texts));
  await waitFor(() => !diffTab('withdrawn'), 'the withdrawn diff to close');
});
