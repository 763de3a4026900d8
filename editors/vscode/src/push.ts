// What the editor tells the bridge without being asked: the active file and selection,
// diagnostics, saves, AI comments, debug state. Each is debounced and sent only when it
// changed; after every (re)connection everything is sent again (a restarted bridge
// knows nothing).
import * as vscode from 'vscode';

import { aiCommentsOf, allAiComments } from './ai';
import { Connection } from './connection';
import { Debug } from './handlers/debug';
import { Debouncer, diagnosticsOf, selectionOf } from './util';

export class Push implements vscode.Disposable {
  private readonly disposables: vscode.Disposable[] = [];
  private readonly selectionDebounce = new Debouncer(50);
  private readonly diagnosticsDebounce = new Debouncer(150);
  private readonly aiDebounce = new Debouncer(300);
  /** What was sent last, per kind and key, so that only changes go out. */
  private readonly last = new Map<string, string>();

  constructor(
    private readonly connection: Connection,
    private readonly debug: Debug,
    private readonly aiComments: () => boolean,
  ) {
    this.disposables.push(
      this.selectionDebounce,
      this.diagnosticsDebounce,
      this.aiDebounce,
      vscode.window.onDidChangeTextEditorSelection((e) => {
        if (e.textEditor.document.uri.scheme === 'file') this.selectionDebounce.run('selection', () => this.selection());
      }),
      vscode.window.onDidChangeActiveTextEditor((e) => {
        if (e?.document.uri.scheme === 'file') {
          this.send('extension/activeFileChanged', 'active', { file: e.document.uri.fsPath });
          this.selectionDebounce.run('selection', () => this.selection());
        }
      }),
      vscode.languages.onDidChangeDiagnostics((e) => {
        for (const uri of e.uris) {
          if (uri.scheme === 'file') this.diagnosticsDebounce.run(uri.toString(), () => this.diagnostics(uri));
        }
      }),
      vscode.workspace.onDidSaveTextDocument((doc) => {
        if (doc.uri.scheme === 'file') this.connection.notify('extension/fileSaved', { file: doc.uri.fsPath });
      }),
      vscode.workspace.onDidChangeTextDocument((e) => this.aiLater(e.document)),
      vscode.workspace.onDidOpenTextDocument((doc) => this.aiLater(doc)),
      connection.onState((state) => {
        if (state === 'connected' && !this.wasConnected) this.everything();
        this.wasConnected = state === 'connected';
        if (state !== 'connected') this.last.clear();
      }),
    );
  }

  private wasConnected = false;

  /** Sends `params` under `method` unless it is what was last sent for `key`. */
  private send(method: string, key: string, params: object, force = false): void {
    const text = JSON.stringify(params);
    if (!force && this.last.get(key) === text) return;
    if (this.connection.notify(method, params)) this.last.set(key, text);
  }

  private selection(force = false): void {
    const editor = vscode.window.activeTextEditor;
    if (editor?.document.uri.scheme === 'file') this.send('extension/selectionChanged', 'selection', selectionOf(editor), force);
  }

  private diagnostics(uri: vscode.Uri, force = false): void {
    this.send('extension/diagnosticsChanged', `diagnostics ${uri}`, { file: uri.fsPath, diagnostics: diagnosticsOf(uri) }, force);
  }

  private aiLater(doc: vscode.TextDocument): void {
    if (doc.uri.scheme !== 'file' || !this.aiComments()) return;
    this.aiDebounce.run(doc.uri.toString(), () => {
      this.send('extension/aiCommentsChanged', `ai ${doc.uri}`, { comments: aiCommentsOf(doc), file: doc.uri.fsPath });
    });
  }

  /** Debug state changed (the Debug tracker calls this). */
  debugChanged(): void {
    this.send('extension/debugSessionChanged', 'debug', this.debug.summary());
  }

  /** After a (re)connection: everything the bridge should know. */
  private everything(): void {
    const active = vscode.window.activeTextEditor;
    if (active?.document.uri.scheme === 'file') this.send('extension/activeFileChanged', 'active', { file: active.document.uri.fsPath }, true);
    this.selection(true);
    for (const [uri] of vscode.languages.getDiagnostics()) {
      if (uri.scheme === 'file') this.diagnostics(uri, true);
    }
    if (this.aiComments()) {
      const comments = allAiComments();
      if (comments.length) this.send('extension/aiCommentsChanged', 'ai all', { comments }, true);
    }
    this.send('extension/debugSessionChanged', 'debug', this.debug.summary(), true);
  }

  dispose(): void {
    this.disposables.forEach((d) => d.dispose());
  }
}
