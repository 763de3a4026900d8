'use strict';
// Every method of the extension protocol, called through the bridge's agent tools: each
// answered by VS Code (the built-in TypeScript support for the language features, the
// integrated terminal with shell integration, js-debug for debugging), or refused at once
// with the documented error.
const fs = require('fs');
const vscode = require('vscode');
const { assert, shared, waitFor, ws } = require('./bridge');
const { test } = require('./runner');

const a = () => shared.agent;
const shapes = () => ws('src/shapes.ts');
const main = () => ws('src/main.ts');

async function show(file) {
  const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(file));
  return vscode.window.showTextDocument(doc, { preview: false });
}

function write(rel, text) {
  fs.mkdirSync(require('path').dirname(ws(rel)), { recursive: true });
  fs.writeFileSync(ws(rel), text);
  return ws(rel);
}

// ------------------------------------------------------------------ LSP

test('goToDefinition, findReferences, getHover: the TypeScript server answers', async () => {
  await show(main());
  // `new Circle(2)`: line 3, column 15.
  const defs = await waitFor(async () => {
    const r = await a().call('goToDefinition', { file: main(), line: 3, column: 15 });
    return !r.error && Array.isArray(r.json) && r.json.length ? r.json : undefined;
  }, 'a definition (the TypeScript server starting)', 60000, 500);
  assert(defs[0].file === shapes() && defs[0].line === 6, JSON.stringify(defs));
  const hover = await a().ok('getHover', { file: main(), line: 3, column: 15 });
  const text = hover.contents.join('\n');
  assert(/Circle\(radius: number\)/.test(text) && /A circle of the given radius/.test(text), text);
  const refs = await a().ok('findReferences', { file: shapes(), line: 13, column: 17 });
  assert(refs.count >= 2 && refs.references.some((r) => r.file === main()), JSON.stringify(refs));
});

test('getDocumentSymbols, searchSymbols', async () => {
  const symbols = await a().ok('getDocumentSymbols', { file: shapes() });
  const names = symbols.symbols.map((s) => s.name);
  for (const n of ['Shape', 'Circle', 'describe', 'area']) assert(names.includes(n), names.join(', '));
  assert(symbols.symbols.find((s) => s.name === 'Circle').kind === 'Class', JSON.stringify(symbols.symbols));
  const found = await waitFor(async () => {
    const r = await a().ok('searchSymbols', { query: 'Circ' });
    return r.symbols.find((s) => s.name === 'Circle');
  }, 'Circle among the workspace symbols', 20000, 500);
  assert(found.file === shapes(), JSON.stringify(found));
});

test('getCallHierarchy, getTypeHierarchy', async () => {
  const calls = await a().ok('getCallHierarchy', { file: shapes(), line: 13, column: 17, direction: 'incoming' });
  assert(calls.symbol.name === 'describe', JSON.stringify(calls));
  assert(calls.incoming.some((c) => c.file === main()), JSON.stringify(calls.incoming));
  const types = await a().ok('getTypeHierarchy', { file: shapes(), line: 6, column: 14 });
  assert(typeof types.found === 'boolean', JSON.stringify(types));
});

test('getCodeActions, applyCodeAction, renameSymbol', async () => {
  const actions = await a().ok('getCodeActions', { file: shapes(), startLine: 13, startColumn: 1, endLine: 15, endColumn: 2 });
  assert(Array.isArray(actions.actions), JSON.stringify(actions));
  const none = await a().ok('applyCodeAction', { file: shapes(), startLine: 1, startColumn: 1, endLine: 1, endColumn: 5, actionTitle: 'No such action' });
  assert(none.applied === false && /no code action/.test(none.error), JSON.stringify(none));
  const file = write('src/rename.ts', 'export const value = 1;\nconsole.log(value);\n');
  await show(file);
  const renamed = await a().ok('renameSymbol', { file, line: 1, column: 14, newName: 'amount' });
  assert(renamed.success === true && renamed.totalEdits === 2, JSON.stringify(renamed));
  const doc = vscode.workspace.textDocuments.find((d) => d.uri.fsPath === file);
  assert(doc.getText() === 'export const amount = 1;\nconsole.log(amount);\n', doc.getText());
  await doc.save();
});

test('getInlayHints', async () => {
  // The workspace's settings turn TypeScript's parameter-name hints on.
  await show(main());
  let last;
  const hints = await waitFor(async () => {
    last = await a().ok('getInlayHints', { file: main(), startLine: 1, endLine: 4 });
    return last.hints.find((h) => /radius/.test(h.label));
  }, 'the parameter-name hint', 20000, 500).catch((e) => {
    throw new Error(`${e.message}; last answer ${JSON.stringify(last)}`);
  });
  assert(hints.position.line === 3, JSON.stringify(hints));
});

test('formatDocument, organizeImports, fixAllLintErrors', async () => {
  const file = write('src/messy.ts', "import { describe, Circle } from './shapes';\nconst  x={a:1};\nexport { x, Circle };\n");
  await show(file);
  const formatted = await a().ok('formatDocument', { file });
  assert(formatted.success === true && formatted.editsApplied > 0, JSON.stringify(formatted));
  const doc = vscode.workspace.textDocuments.find((d) => d.uri.fsPath === file);
  assert(doc.getText().includes('const x = { a: 1 };'), doc.getText());
  const organized = await a().ok('organizeImports', { file });
  assert(organized.success === true, JSON.stringify(organized));
  await waitFor(() => !doc.getText().includes('describe,'), 'the unused import removed', 10000, 200);
  const fixed = await a().ok('fixAllLintErrors', { file });
  assert(fixed.success === true, JSON.stringify(fixed));
  await doc.save();
});

// ------------------------------------------------------------------ Terminal

test('terminals: create, list, send, wait for output, read, execute with exit code, dispose', async () => {
  const created = await a().ok('createTerminal', { name: 'build' });
  assert(created.success === true && created.name.endsWith('build'), JSON.stringify(created));
  const listed = await a().ok('listTerminals');
  const t = listed.terminals.find((x) => x.name === created.name);
  assert(t, JSON.stringify(listed));
  // Shell integration comes up with the shell.
  await waitFor(async () => (await a().ok('listTerminals')).terminals.find((x) => x.name === created.name && x.hasOutputCapture), 'shell integration', 20000, 200);
  const sent = await a().ok('sendTerminalCommand', { name: 'build', text: 'echo sent-$((40+2))' });
  assert(sent.success === true, JSON.stringify(sent));
  const waited = await a().ok('waitForTerminalOutput', { name: 'build', pattern: 'sent-\\d+', timeoutMs: 8000 });
  assert(waited.matched === true && /sent-42/.test(waited.matchedLine), JSON.stringify(waited) + JSON.stringify(await a().ok('getTerminalOutput', { name: 'build' })));
  const out = await a().ok('getTerminalOutput', { name: 'build', lines: 50 });
  assert((out.lines || out.output || []).toString().includes('sent-42'), JSON.stringify(out));
  const ran = await a().ok('executeInTerminal', { name: 'build', command: 'echo out-1; echo out-2; false', timeoutMs: 8000 });
  assert(ran.exitCode === 1 && ran.success === false, JSON.stringify(ran));
  assert(/out-1\s*\n\s*out-2/.test(ran.output), JSON.stringify(ran));
  const ok = await a().ok('executeInTerminal', { name: 'build', command: 'true', timeoutMs: 8000 });
  assert(ok.exitCode === 0, JSON.stringify(ok));
  // Past the extension's 9 s default and near the bridge's 10 s request timeout: the
  // agent's timeoutMs holds on both sides.
  const late = await a().ok('executeInTerminal', { name: 'build', command: 'sleep 9.5; echo late', timeoutMs: 20000 }, 30000);
  assert(late.timedOut !== true && late.exitCode === 0 && /late/.test(late.output), JSON.stringify(late));
  const disposed = await a().ok('disposeTerminal', { name: 'build' });
  assert(disposed.success === true, JSON.stringify(disposed));
  await waitFor(async () => !(await a().ok('listTerminals')).terminals.some((x) => x.name === created.name), 'the terminal gone');
}, { timeoutMs: 90000 });

// ------------------------------------------------------------------ Debug

test('debugging: breakpoints, start, paused state with stack, evaluate, stop', async () => {
  const prog = ws('debug/prog.js');
  const set = await a().ok('setDebugBreakpoints', { file: prog, breakpoints: [{ line: 3 }] });
  assert(set.set === 1, JSON.stringify(set));
  const started = await a().ok('startDebugging', { configName: 'Run prog' });
  assert(started.started === true, JSON.stringify(started));
  const state = await waitFor(async () => {
    const s = await a().ok('getDebugState');
    return s.isPaused ? s : undefined;
  }, 'the program paused at the breakpoint', 30000, 200);
  assert(state.hasActiveSession && state.callStack[0].line === 3, JSON.stringify(state));
  assert(state.breakpoints.some((b) => b.file === prog && b.line === 3), JSON.stringify(state.breakpoints));
  const value = await a().ok('evaluateInDebugger', { expression: 'total + 100' });
  assert(value.result === '100', JSON.stringify(value));
  const stopped = await a().ok('stopDebugging');
  assert(stopped.stopped === true, JSON.stringify(stopped));
  // Polled once a second: the suite shares one connection's rate limit.
  await waitFor(async () => !(await a().ok('getDebugState')).hasActiveSession, 'the session to end', 20000, 1000);
  await a().ok('setDebugBreakpoints', { file: prog, breakpoints: [] });
  await a().refused('startDebugging', { configName: 'No such config' }, /no launch configuration named "No such config"/);
}, { timeoutMs: 90000 });

// ------------------------------------------------------------------ Files

test('open files, dirty, open at a line, content with unsaved changes, save, close', async () => {
  const notes = ws('notes.txt');
  const opened = await a().ok('openFile', { filePath: notes, startLine: 2 });
  assert(String(opened).startsWith('Opened file'), JSON.stringify(opened));
  const editor = vscode.window.activeTextEditor;
  assert(editor.document.uri.fsPath === notes && editor.selection.active.line === 1, `${editor.document.uri.fsPath}:${editor.selection.active.line}`);
  const tabs = (await a().ok('getOpenEditors')).tabs;
  assert(tabs.some((t) => t.fileName === notes && t.isActive), JSON.stringify(tabs));
  // The CLI's selection arguments select the text they name: "et" in beta to the end of "gam".
  await a().ok('openFile', { filePath: notes, startText: 'et', endText: 'gam' });
  const sel = vscode.window.activeTextEditor.selection;
  assert(sel.start.line === 1 && sel.start.character === 1 && sel.end.line === 2 && sel.end.character === 3, JSON.stringify(sel));
  assert((await a().ok('checkDocumentDirty', { filePath: notes })).isDirty === false, 'clean');
  await editor.edit((e) => e.insert(new vscode.Position(0, 5), 'X'));
  const content = await a().ok('getFileContent', { file: notes });
  assert(content.content === 'alphaX\nbeta\ngamma\n' && content.isDirty === true, JSON.stringify(content));
  assert((await a().ok('checkDocumentDirty', { filePath: notes })).isDirty === true, 'dirty');
  const saved = await a().ok('saveDocument', { filePath: notes });
  assert(saved.saved === true && fs.readFileSync(notes, 'utf8') === 'alphaX\nbeta\ngamma\n', JSON.stringify(saved));
  const closed = await a().ok('closeTab', { file: notes });
  assert(closed.success === true, JSON.stringify(closed));
  await waitFor(() => !vscode.window.tabGroups.all.flatMap((g) => g.tabs).some((t) => t.input instanceof vscode.TabInputText && t.input.uri.fsPath === notes), 'the tab closed');
});

test('create, rename and delete files; workspace folders', async () => {
  const made = await a().ok('createFile', { filePath: ws('made/new.txt'), content: 'made\n' });
  assert(made.created === true && made.source === 'editor', JSON.stringify(made));
  assert(fs.readFileSync(ws('made/new.txt'), 'utf8') === 'made\n', 'written');
  // Overwritten, it was not created.
  const again = await a().ok('createFile', { filePath: ws('made/new.txt'), content: 'made\n', overwrite: true });
  assert(again.created === false && again.source === 'editor', JSON.stringify(again));
  const renamed = await a().ok('renameFile', { oldPath: ws('made/new.txt'), newPath: ws('made/renamed.txt') });
  assert(renamed.renamed === true && fs.existsSync(ws('made/renamed.txt')), JSON.stringify(renamed));
  const deleted = await a().ok('deleteFile', { filePath: ws('made/renamed.txt') });
  assert(deleted.deleted === true && !fs.existsSync(ws('made/renamed.txt')), JSON.stringify(deleted));
  const folders = await a().ok('getWorkspaceFolders');
  assert(folders.folders[0].path === ws(), JSON.stringify(folders));
});

test('editText and replaceBlock', async () => {
  const f = write('edit.txt', 'one two three\nfour\n');
  const edited = await a().ok('editText', {
    filePath: f,
    edits: [
      { type: 'replace', line: 1, column: 5, endLine: 1, endColumn: 8, text: 'TWO' },
      { type: 'insert', line: 2, column: 1, text: '>> ' },
      { type: 'delete', line: 1, column: 9, endLine: 1, endColumn: 14 },
    ],
  });
  assert(edited.editCount === 3 && edited.saved === true, JSON.stringify(edited));
  assert(fs.readFileSync(f, 'utf8') === 'one TWO \n>> four\n', fs.readFileSync(f, 'utf8'));
  const replaced = await a().ok('replaceBlock', { filePath: f, oldContent: 'TWO \n>> four', newContent: '2\n4' });
  assert(replaced.saved === true && fs.readFileSync(f, 'utf8') === 'one 2\n4\n', JSON.stringify(replaced));
});

// ------------------------------------------------------------------ Other

test('getSelection and getAIComments', async () => {
  const editor = await show(shapes());
  editor.selection = new vscode.Selection(new vscode.Position(12, 16), new vscode.Position(12, 24));
  const sel = await a().ok('getSelection');
  assert(sel.file === shapes() && sel.selectedText === 'describe', JSON.stringify(sel));
  assert(sel.startLine === 13 && sel.startColumn === 17 && sel.endLine === 13 && sel.endColumn === 25, JSON.stringify(sel));
  await show(main());
  const comments = await a().ok('getAIComments');
  const c = (Array.isArray(comments) ? comments : comments.comments).find((x) => x.file === main());
  assert(c && c.line === 4 && c.comment === 'print the radius too' && c.syntax === '//', JSON.stringify(comments));
});

test('watchFiles and unwatchFiles', async () => {
  const watching = await a().ok('watchFiles', { id: 'txt', pattern: '**/*.txt' });
  assert(watching.watching === true, JSON.stringify(watching));
  write('watched.txt', 'x\n');
  const unwatched = await a().ok('unwatchFiles', { id: 'txt' });
  assert(unwatched.unwatched === true, JSON.stringify(unwatched));
});

test('setDecorations and clearDecorations', async () => {
  await show(shapes());
  const set = await a().ok('setDecorations', { id: 'review', file: shapes(), decorations: [{ startLine: 6, endLine: 7, style: 'warning', message: 'look here' }] });
  assert(set.applied === 1 && set.editorsUpdated >= 1, JSON.stringify(set));
  const cleared = await a().ok('clearDecorations', { id: 'review' });
  assert(cleared.cleared === 1, JSON.stringify(cleared));
});

test('writeClipboard and readClipboard', async () => {
  const w = await a().ok('writeClipboard', { text: 'from the agent' });
  assert(w.written === true, JSON.stringify(w));
  assert((await vscode.env.clipboard.readText()) === 'from the agent', 'on the clipboard');
  await vscode.env.clipboard.writeText('from the user');
  assert((await a().ok('readClipboard')).text === 'from the user', 'read back');
});

test('settings: read any section, change only allowed ones, in the workspace', async () => {
  const s = await a().ok('getWorkspaceSettings', { section: 'editor' });
  assert(typeof s.settings.tabSize === 'number', JSON.stringify(s).slice(0, 200));
  const set = await a().ok('setWorkspaceSetting', { key: 'editor.tabSize', value: 3 });
  assert(set.set === true && set.target === 'workspace', JSON.stringify(set));
  await waitFor(() => vscode.workspace.getConfiguration('editor').get('tabSize') === 3, 'the setting applied');
  await a().refused('setWorkspaceSetting', { key: 'terminal.integrated.env.linux', value: { PATH: '/tmp' } }, /may not be changed by agents/);
});

test('commands: refused unless the user allows them; listed; screenshots not supported', async () => {
  await a().refused('executeVSCodeCommand', { command: 'workbench.action.closeAllEditors' }, /disabled for agents/);
  // An agent can write the workspace's settings: they cannot allow anything.
  const file = ws('.vscode/settings.json');
  const before = fs.readFileSync(file, 'utf8');
  fs.writeFileSync(file, JSON.stringify({ ...JSON.parse(before), 'ideBridge.allowCommands': true, 'ideBridge.allowedCommands': ['workbench.action.closeAllEditors'] }));
  try {
    await new Promise((r) => setTimeout(r, 500)); // the file watcher reloads the settings
    await a().refused('executeVSCodeCommand', { command: 'workbench.action.closeAllEditors' }, /disabled for agents/);
  } finally {
    fs.writeFileSync(file, before);
  }
  // The user allows one command in the user settings.
  await vscode.workspace.getConfiguration('ideBridge').update('allowedCommands', ['editor.action.selectAll'], vscode.ConfigurationTarget.Global);
  const editor = await show(ws('notes.txt'));
  const ran = await a().ok('executeVSCodeCommand', { command: 'editor.action.selectAll' });
  assert('result' in ran, JSON.stringify(ran));
  await waitFor(() => editor.document.getText(editor.selection) === editor.document.getText(), 'everything selected');
  const listed = await a().ok('listVSCodeCommands', { filter: 'ideBridge' });
  assert(listed.commands.includes('ideBridge.showStatus'), JSON.stringify(listed));
  await a().refused('captureScreenshot', {}, /captureScreenshot is not supported in VS Code/);
});
