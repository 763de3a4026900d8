// The rest of the protocol: selection, AI comments, file watching, decorations, the
// clipboard, settings, commands, screenshots.
import * as vscode from 'vscode';

import { allAiComments } from '../ai';
import { Connection, Params } from '../connection';
import { Log } from '../log';
import { diagnosticsOf, need, position, selectionOf, uriOf } from '../util';

/** Text returned by `readClipboard`, at most. */
const MAX_CLIPBOARD = 1024 * 1024;
/** Commands listed by `listVSCodeCommands`, at most. */
const MAX_COMMANDS = 500;

/** What the user allows agents (read at each request, so changes apply at once). */
export interface Permissions {
  allowCommands(): boolean;
  allowedCommands(): string[];
  allowedSettings(): string[];
}

/** The selection of the active editor, 1-based, end exclusive. */
/** Something JSON can carry (a command's result may hold URIs, ranges, functions…). */
function plain(value: unknown): unknown {
  try {
    return JSON.parse(JSON.stringify(value ?? null));
  } catch {
    return String(value);
  }
}

export class Misc implements vscode.Disposable {
  private readonly watchers = new Map<string, vscode.FileSystemWatcher>();
  private readonly decorations = new Map<string, vscode.TextEditorDecorationType[]>();

  constructor(
    private readonly connection: Connection,
    private readonly permissions: Permissions,
    private readonly log: Log,
  ) {}

  private clearDecorations(id?: string): number {
    let cleared = 0;
    for (const [key, types] of this.decorations) {
      if (id !== undefined && key !== id) continue;
      types.forEach((t) => t.dispose());
      this.decorations.delete(key);
      cleared += 1;
    }
    return cleared;
  }

  register(c: Connection): void {
    c.handle('getSelection', () => {
      const editor = vscode.window.activeTextEditor;
      if (!editor) throw new Error('no active editor');
      return selectionOf(editor);
    });

    c.handle('getDiagnostics', (p: Params) => {
      const uris = p.file ? [uriOf(String(p.file))] : vscode.languages.getDiagnostics().map(([uri]) => uri).filter((u) => u.scheme === 'file');
      return uris.map((uri) => ({ file: uri.fsPath, diagnostics: diagnosticsOf(uri) }));
    });

    c.handle('getAIComments', () => allAiComments().map(({ file, line, comment, severity, syntax }) => ({ file, line, comment, severity, syntax })));

    c.handle('watchFiles', (p: Params) => {
      const id = String(need(p, 'id'));
      const pattern = String(need(p, 'pattern'));
      const folder = vscode.workspace.workspaceFolders?.[0];
      if (!folder) throw new Error('no workspace folder is open');
      this.watchers.get(id)?.dispose();
      const watcher = vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(folder, pattern));
      const send = (type: string) => (uri: vscode.Uri) => this.connection.notify('extension/fileChanged', { id, type, file: uri.fsPath });
      watcher.onDidCreate(send('created'));
      watcher.onDidChange(send('changed'));
      watcher.onDidDelete(send('deleted'));
      this.watchers.set(id, watcher);
      return { watching: true, id, pattern };
    });

    c.handle('unwatchFiles', (p: Params) => {
      const id = String(need(p, 'id'));
      const watcher = this.watchers.get(id);
      watcher?.dispose();
      this.watchers.delete(id);
      return { unwatched: watcher !== undefined, id };
    });

    c.handle('setDecorations', (p: Params) => {
      const id = String(need(p, 'id'));
      const uri = uriOf(need(p, 'file'));
      const wanted = (p.decorations ?? []) as Array<{ startLine: number; endLine?: number; style?: string; message?: string; hoverMessage?: string }>;
      this.clearDecorations(id);
      const byStyle = new Map<string, vscode.DecorationOptions[]>();
      for (const d of wanted) {
        const range = new vscode.Range(position(d.startLine, 1), position(d.endLine ?? d.startLine, Number.MAX_SAFE_INTEGER));
        const options: vscode.DecorationOptions = {
          range,
          hoverMessage: d.hoverMessage ? new vscode.MarkdownString(d.hoverMessage) : undefined,
          renderOptions: d.message ? { after: { contentText: `  ${d.message}` } } : undefined,
        };
        const style = d.style ?? 'info';
        byStyle.set(style, [...(byStyle.get(style) ?? []), options]);
      }
      const colors: Record<string, string> = {
        error: 'editorError.foreground',
        warning: 'editorWarning.foreground',
        info: 'editorInfo.foreground',
        success: 'testing.iconPassed',
        focus: 'editor.findMatchHighlightBorder',
        strikethrough: 'editorWarning.foreground',
        dim: 'disabledForeground',
      };
      const types: vscode.TextEditorDecorationType[] = [];
      const editors = vscode.window.visibleTextEditors.filter((e) => e.document.uri.toString() === uri.toString());
      for (const [style, options] of byStyle) {
        const color = new vscode.ThemeColor(colors[style] ?? colors.info);
        const type = vscode.window.createTextEditorDecorationType({
          isWholeLine: true,
          overviewRulerColor: color,
          after: { color, margin: '0 0 0 1em' },
          textDecoration: style === 'strikethrough' ? 'line-through' : undefined,
          opacity: style === 'dim' ? '0.5' : undefined,
          border: style === 'focus' ? '1px solid' : undefined,
          borderColor: style === 'focus' ? color : undefined,
        });
        types.push(type);
        editors.forEach((e) => e.setDecorations(type, options));
      }
      this.decorations.set(id, types);
      return { applied: wanted.length, editorsUpdated: editors.length };
    });

    c.handle('clearDecorations', (p: Params) => ({ cleared: this.clearDecorations(p.id === undefined ? undefined : String(p.id)) }));

    c.handle('readClipboard', async () => {
      const text = await vscode.env.clipboard.readText();
      return { text: text.slice(0, MAX_CLIPBOARD), byteLength: Buffer.byteLength(text), truncated: text.length > MAX_CLIPBOARD };
    });

    c.handle('writeClipboard', async (p: Params) => {
      const text = String(p.text ?? '');
      await vscode.env.clipboard.writeText(text);
      return { written: true, byteLength: Buffer.byteLength(text) };
    });

    c.handle('getWorkspaceSettings', (p: Params) => {
      const sections = p.section ? [String(p.section)] : ['editor', 'files'];
      const settings: Record<string, unknown> = {};
      for (const section of sections) settings[section] = plain(vscode.workspace.getConfiguration(section));
      return { section: p.section ?? null, settings: p.section ? settings[sections[0]] : settings };
    });

    c.handle('setWorkspaceSetting', async (p: Params) => {
      const key = String(need(p, 'key'));
      const allowed = this.permissions.allowedSettings();
      if (!allowed.includes(key)) {
        throw new Error(`setting ${key} may not be changed by agents (allowed: ${allowed.join(', ') || 'none'}; see ideBridge.allowedSettings)`);
      }
      if (p.target === 'user' || p.target === 'global') throw new Error('agents change settings of the workspace only, never the user\'s');
      await vscode.workspace.getConfiguration().update(key, p.value, vscode.ConfigurationTarget.Workspace);
      this.log.info(`an agent set ${key} in the workspace settings`);
      return { set: true, key, target: 'workspace' };
    });

    c.handle('executeVSCodeCommand', async (p: Params) => {
      const command = String(need(p, 'command'));
      if (!this.permissions.allowCommands() && !this.permissions.allowedCommands().includes(command)) {
        throw new Error(`running VS Code commands is disabled for agents: allow ${command} in ideBridge.allowedCommands (or all with ideBridge.allowCommands)`);
      }
      this.log.info(`an agent runs the command ${command}`);
      const args = Array.isArray(p.args) ? p.args : p.args === undefined ? [] : [p.args];
      return { result: plain(await vscode.commands.executeCommand(command, ...args)) };
    });

    c.handle('listVSCodeCommands', async (p: Params) => {
      const filter = String(p.filter ?? '').toLowerCase();
      const all = (await vscode.commands.getCommands(true)).filter((name) => name.toLowerCase().includes(filter)).sort();
      return {
        commands: all.slice(0, MAX_COMMANDS),
        count: Math.min(all.length, MAX_COMMANDS),
        truncated: all.length > MAX_COMMANDS,
        runnable: this.permissions.allowCommands() ? 'all' : this.permissions.allowedCommands(),
      };
    });

    c.handle('captureScreenshot', () => {
      throw new Error('captureScreenshot is not supported in VS Code: extensions have no API to capture the window');
    });
  }

  dispose(): void {
    this.watchers.forEach((w) => w.dispose());
    this.clearDecorations();
  }
}
