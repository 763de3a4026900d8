// What agents changed (bridge/agentChanges): the lines each agent changed that the
// person has not kept or undone yet get a gutter mark and, at the end of the run's
// first line, the agent's name. VS Code itself reloads an unmodified document changed
// on disk; a modified one is left alone with a warning. Keep or undo in the bridge's
// page (Changes) or with the undoChanges/keepChanges tools.
import * as vscode from 'vscode';

import { Connection, Params } from './connection';

export interface AgentRun {
  startLine: number;
  endLine: number;
  agent: string;
  session: string;
}

export class Changes implements vscode.Disposable {
  private readonly byFile = new Map<string, AgentRun[]>();
  private readonly mark = vscode.window.createTextEditorDecorationType({
    isWholeLine: true,
    overviewRulerColor: new vscode.ThemeColor('editorOverviewRuler.modifiedForeground'),
    overviewRulerLane: vscode.OverviewRulerLane.Left,
    borderWidth: '0 0 0 3px',
    borderStyle: 'solid',
    borderColor: new vscode.ThemeColor('editorGutter.modifiedBackground'),
  });
  /** The agent's name at the end of each run's first line. */
  private readonly label = vscode.window.createTextEditorDecorationType({});
  private readonly disposables: vscode.Disposable[] = [];

  constructor(connection: Connection) {
    connection.onNotification('bridge/agentChanges', (p: Params) => this.onChanges(p));
    this.disposables.push(vscode.window.onDidChangeVisibleTextEditors(() => this.paintAll()));
  }

  /** The runs marked in `file` (absolute path), for tests and the status view. */
  runs(file: string): AgentRun[] {
    return this.byFile.get(file) ?? [];
  }

  private onChanges(p: Params): void {
    const file = typeof p.file === 'string' ? p.file : '';
    if (!file) return;
    const runs = Array.isArray(p.changes) ? (p.changes as AgentRun[]) : [];
    this.byFile.set(file, runs);
    const doc = vscode.workspace.textDocuments.find((d) => d.uri.scheme === 'file' && d.uri.fsPath === file);
    // Only a write changed the file (a keep only changes the marks).
    if (doc?.isDirty && p.written !== false) {
      void vscode.window.showWarningMessage(`An agent changed ${vscode.workspace.asRelativePath(file)} on disk; your unsaved changes were kept and the file was not reloaded.`);
    }
    this.paintAll();
  }

  private paintAll(): void {
    for (const editor of vscode.window.visibleTextEditors) {
      if (editor.document.uri.scheme !== 'file') continue;
      const runs = this.byFile.get(editor.document.uri.fsPath) ?? [];
      const last = editor.document.lineCount - 1;
      editor.setDecorations(
        this.mark,
        runs.map((r) => ({
          range: new vscode.Range(Math.min(r.startLine - 1, last), 0, Math.min(r.endLine - 1, last), 0),
          hoverMessage: `${r.agent} changed these lines (keep or undo in the ide-bridge page)`,
        })),
      );
      editor.setDecorations(
        this.label,
        runs.map((r) => {
          const line = Math.min(r.startLine - 1, last);
          const end = editor.document.lineAt(line).range.end;
          return {
            range: new vscode.Range(end, end),
            renderOptions: { after: { contentText: `  ${r.agent}`, color: new vscode.ThemeColor('editorCodeLens.foreground') } },
          };
        }),
      );
    }
  }

  dispose(): void {
    this.mark.dispose();
    this.label.dispose();
    for (const d of this.disposables) d.dispose();
  }
}
