// Files and documents: open, dirty, save, close, content (with unsaved changes), create,
// delete, rename, workspace folders, and the two text edits.
import * as vscode from 'vscode';

import { Connection, Params } from '../connection';
import { documentOf, need, openDocument, position, uriOf } from '../util';

/** Tabs showing `uri` as a text editor. */
function tabsOf(uri: vscode.Uri): vscode.Tab[] {
  return vscode.window.tabGroups.all
    .flatMap((g) => g.tabs)
    .filter((t) => t.input instanceof vscode.TabInputText && t.input.uri.toString() === uri.toString());
}

async function exists(uri: vscode.Uri): Promise<boolean> {
  try {
    await vscode.workspace.fs.stat(uri);
    return true;
  } catch {
    return false;
  }
}

async function save(doc: vscode.TextDocument, wanted: boolean): Promise<boolean> {
  return wanted ? doc.save() : false;
}

export function register(c: Connection): void {
  c.handle('getOpenFiles', () => {
    const active = vscode.window.activeTextEditor?.document.uri.toString();
    const seen = new Set<string>();
    const files: object[] = [];
    for (const doc of vscode.workspace.textDocuments) {
      if (doc.uri.scheme !== 'file' || seen.has(doc.uri.toString())) continue;
      seen.add(doc.uri.toString());
      files.push({ filePath: doc.uri.fsPath, isActive: doc.uri.toString() === active, isDirty: doc.isDirty, languageId: doc.languageId });
    }
    return files;
  });

  c.handle('isDirty', (p: Params) => openDocument(need(p, 'file'))?.isDirty ?? false);

  c.handle('openFile', async (p: Params) => {
    const doc = await documentOf(need(p, 'file'));
    // In the background: a tab of its own, the focus where it was.
    const editor = await vscode.window.showTextDocument(doc, { preview: false, preserveFocus: p.background === true });
    const sel = p.selection;
    if (sel || p.line) {
      const start = sel ? position(sel.startLine, sel.startColumn) : position(p.line, 1);
      const end = sel ? position(sel.endLine, sel.endColumn) : start;
      editor.selection = new vscode.Selection(start, end);
      editor.revealRange(new vscode.Range(start, end), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
    }
    return true;
  });

  c.handle('saveFile', async (p: Params) => {
    const doc = openDocument(need(p, 'file'));
    if (!doc) return { success: false, error: `file is not open in VS Code: ${p.file}` };
    return (await doc.save()) ? true : { success: false, error: 'VS Code did not save the file' };
  });

  c.handle('closeTab', async (p: Params) => {
    const uri = uriOf(need(p, 'file'));
    const tabs = tabsOf(uri);
    if (tabs.length === 0) return { success: false, error: 'file is not open' };
    if (openDocument(p.file)?.isDirty) {
      return { success: false, promptedToSave: false, error: 'the document has unsaved changes; save it or close it in VS Code' };
    }
    await vscode.window.tabGroups.close(tabs);
    return { success: true };
  });

  c.handle('getFileContent', async (p: Params) => {
    const file = need<string>(p, 'file');
    const wasOpen = openDocument(file) !== undefined;
    const doc = await documentOf(file);
    return {
      content: doc.getText(),
      isDirty: doc.isDirty,
      languageId: doc.languageId,
      lineCount: doc.lineCount,
      version: doc.version,
      source: wasOpen ? 'editor' : 'disk',
    };
  });

  c.handle('createFile', async (p: Params) => {
    const uri = uriOf(need(p, 'filePath'));
    const existed = await exists(uri);
    if (!p.overwrite && existed && !p.isDirectory) throw new Error(`file exists: ${uri.fsPath} (pass overwrite: true to replace it)`);
    if (p.isDirectory) {
      await vscode.workspace.fs.createDirectory(uri);
    } else {
      await vscode.workspace.fs.writeFile(uri, Buffer.from(String(p.content ?? ''), 'utf8'));
      if (p.openAfterCreate) await vscode.window.showTextDocument(uri, { preview: false });
    }
    // Created only when it was not there (a file overwritten, a directory asked for again).
    return { success: true, filePath: uri.fsPath, created: !existed };
  });

  c.handle('deleteFile', async (p: Params) => {
    const uri = uriOf(need(p, 'filePath'));
    await vscode.workspace.fs.delete(uri, { recursive: p.recursive === true, useTrash: p.useTrash === true });
    return { success: true, filePath: uri.fsPath, deleted: true };
  });

  c.handle('renameFile', async (p: Params) => {
    const from = uriOf(need(p, 'oldPath'));
    const to = uriOf(need(p, 'newPath'));
    // Through a workspace edit, so open editors follow the file.
    const edit = new vscode.WorkspaceEdit();
    edit.renameFile(from, to, { overwrite: p.overwrite === true });
    if (!(await vscode.workspace.applyEdit(edit))) throw new Error(`could not rename ${from.fsPath} to ${to.fsPath}`);
    return { success: true, oldPath: from.fsPath, newPath: to.fsPath, renamed: true };
  });

  c.handle('getWorkspaceFolders', () => {
    const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => ({
      name: f.name,
      path: f.uri.fsPath,
      uri: f.uri.toString(),
      index: f.index,
    }));
    return { folders, count: folders.length };
  });

  c.handle('editText', async (p: Params) => {
    const doc = await documentOf(need(p, 'filePath'));
    const edits = need<Array<{ type: string; line: number; column: number; endLine?: number; endColumn?: number; text?: string }>>(p, 'edits');
    if (edits.length > 1000) throw new Error('at most 1000 edits per call');
    // Every edit is placed against the text as it was before any of them.
    const edit = new vscode.WorkspaceEdit();
    for (const e of edits) {
      const start = doc.validatePosition(position(e.line, e.column));
      const end = doc.validatePosition(position(e.endLine ?? e.line, e.endColumn ?? e.column));
      switch (e.type) {
        case 'insert':
          edit.insert(doc.uri, start, e.text ?? '');
          break;
        case 'delete':
          edit.delete(doc.uri, new vscode.Range(start, end));
          break;
        case 'replace':
          edit.replace(doc.uri, new vscode.Range(start, end), e.text ?? '');
          break;
        default:
          throw new Error(`unknown edit type ${JSON.stringify(e.type)} (insert, delete or replace)`);
      }
    }
    if (!(await vscode.workspace.applyEdit(edit))) throw new Error('VS Code refused the edits (do two of them overlap?)');
    return { success: true, editCount: edits.length, saved: await save(doc, p.save === true) };
  });

  c.handle('replaceBlock', async (p: Params) => {
    const doc = await documentOf(need(p, 'filePath'));
    const old = need<string>(p, 'oldContent');
    const text = doc.getText();
    const at = text.indexOf(old);
    if (at < 0) throw new Error('oldContent does not occur in the document');
    if (text.indexOf(old, at + 1) >= 0) throw new Error('oldContent occurs more than once; give more context');
    const edit = new vscode.WorkspaceEdit();
    edit.replace(doc.uri, new vscode.Range(doc.positionAt(at), doc.positionAt(at + old.length)), String(p.newContent ?? ''));
    if (!(await vscode.workspace.applyEdit(edit))) throw new Error('VS Code refused the edit');
    return { success: true, saved: await save(doc, p.save === true), source: 'editor' };
  });
}
