// Conversions between the protocol (absolute paths, 1-based lines and UTF-16 columns)
// and the VS Code API (URIs, 0-based positions).
import * as vscode from 'vscode';

import { Params } from './connection';

/** A request's required parameter, or an error naming it. */
export function need<T>(params: Params, key: string): T {
  const value = params?.[key];
  if (value === undefined || value === null || value === '') throw new Error(`missing parameter: ${key}`);
  return value as T;
}

export function uriOf(file: string): vscode.Uri {
  return file.startsWith('file://') ? vscode.Uri.parse(file) : vscode.Uri.file(file);
}

/** A 0-based position from 1-based `line` and `column` (column defaults to 1). */
export function position(line: number, column?: number): vscode.Position {
  return new vscode.Position(Math.max(0, Number(line) - 1), Math.max(0, Number(column ?? 1) - 1));
}

/** 1-based place of a position. */
export function place(p: vscode.Position): { line: number; column: number } {
  return { line: p.line + 1, column: p.character + 1 };
}

/** 1-based range. */
export function span(r: vscode.Range): { line: number; column: number; endLine: number; endColumn: number } {
  return { line: r.start.line + 1, column: r.start.character + 1, endLine: r.end.line + 1, endColumn: r.end.character + 1 };
}

/** The document of `file`, opened (not shown) when it is not yet. */
export async function documentOf(file: string): Promise<vscode.TextDocument> {
  const uri = uriOf(file);
  const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
  return open ?? vscode.workspace.openTextDocument(uri);
}

/** The open document of `file`, if it is open. */
export function openDocument(file: string): vscode.TextDocument | undefined {
  const uri = uriOf(file);
  return vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
}

/** Text of hover contents and the like. */
export function markupText(c: vscode.MarkdownString | vscode.MarkedString | string): string {
  if (typeof c === 'string') return c;
  if (c instanceof vscode.MarkdownString) return c.value;
  return (c as { value: string }).value ?? String(c);
}

export function symbolKind(kind: vscode.SymbolKind): string {
  return vscode.SymbolKind[kind] ?? String(kind);
}

/** A location or location link as the protocol shows it. */
export function locationOf(l: vscode.Location | vscode.LocationLink): { file: string; line: number; column: number; endLine: number; endColumn: number } {
  if ('targetUri' in l) return { file: l.targetUri.fsPath, ...span(l.targetSelectionRange ?? l.targetRange) };
  return { file: l.uri.fsPath, ...span(l.range) };
}

/** Runs `f` after `ms` of quiet per key; a new call for the key restarts the wait. */
export class Debouncer implements vscode.Disposable {
  private readonly timers = new Map<string, NodeJS.Timeout>();

  constructor(private readonly ms: number) {}

  run(key: string, f: () => void): void {
    const t = this.timers.get(key);
    if (t) clearTimeout(t);
    this.timers.set(
      key,
      setTimeout(() => {
        this.timers.delete(key);
        f();
      }, this.ms),
    );
  }

  dispose(): void {
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }
}

/** The protocol's shape of an editor's selection (1-based). */
export function selectionOf(editor: vscode.TextEditor): object {
  const s = editor.selection;
  return {
    file: editor.document.uri.fsPath,
    startLine: s.start.line + 1,
    startColumn: s.start.character + 1,
    endLine: s.end.line + 1,
    endColumn: s.end.character + 1,
    selectedText: editor.document.getText(s),
  };
}

/** The protocol's shape of a file's diagnostics (1-based). */
const SEVERITY = ['error', 'warning', 'information', 'hint'];

export function diagnosticsOf(uri: vscode.Uri): object[] {
  return vscode.languages.getDiagnostics(uri).map((d) => ({
    message: d.message,
    severity: SEVERITY[d.severity] ?? 'information',
    line: d.range.start.line + 1,
    column: d.range.start.character + 1,
    endLine: d.range.end.line + 1,
    endColumn: d.range.end.character + 1,
    source: d.source,
    code: typeof d.code === 'object' ? String(d.code.value) : d.code,
  }));
}
