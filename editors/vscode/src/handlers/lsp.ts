// Language features through VS Code's own providers (`vscode.execute…Provider`): whatever
// language extensions the user has (the built-in TypeScript support, Python, rust-analyzer…)
// answer, exactly as they do for the editor's own UI.
import * as vscode from 'vscode';

import { Connection, Params } from '../connection';
import { documentOf, locationOf, markupText, need, place, position, span, symbolKind } from '../util';

const run = <T>(command: string, ...args: unknown[]) => vscode.commands.executeCommand<T>(command, ...args);

/** The document of `p.file` and the position `p.line`/`p.column` in it. */
async function at(p: Params): Promise<{ doc: vscode.TextDocument; pos: vscode.Position }> {
  const doc = await documentOf(need(p, 'file'));
  return { doc, pos: doc.validatePosition(position(need(p, 'line'), p.column)) };
}

async function rangeOf(p: Params): Promise<{ doc: vscode.TextDocument; range: vscode.Range }> {
  const doc = await documentOf(need(p, 'file'));
  const start = doc.validatePosition(position(need(p, 'startLine'), p.startColumn));
  const end = doc.validatePosition(position(p.endLine ?? p.startLine, p.endColumn ?? Number.MAX_SAFE_INTEGER));
  return { doc, range: new vscode.Range(start, end) };
}

function limit(p: Params, fallback: number, max: number): number {
  const n = Number(p.maxResults ?? fallback);
  return Math.max(1, Math.min(max, Number.isFinite(n) ? n : fallback));
}

interface Flat {
  name: string;
  kind: string;
  detail?: string;
  containerName?: string;
  line: number;
  column: number;
  endLine: number;
  endColumn: number;
}

function flatten(symbols: Array<vscode.DocumentSymbol | vscode.SymbolInformation>, container?: string, out: Flat[] = []): Flat[] {
  for (const s of symbols) {
    if ('children' in s) {
      out.push({ name: s.name, kind: symbolKind(s.kind), detail: s.detail || undefined, containerName: container, ...span(s.selectionRange) });
      flatten(s.children, s.name, out);
    } else {
      out.push({ name: s.name, kind: symbolKind(s.kind), containerName: s.containerName || undefined, ...span(s.location.range) });
    }
  }
  return out;
}

function item(i: vscode.CallHierarchyItem | vscode.TypeHierarchyItem) {
  return { name: i.name, kind: symbolKind(i.kind), detail: i.detail || undefined, file: i.uri.fsPath, ...span(i.selectionRange) };
}

/** Applies a code action: its edit, then its command. */
async function apply(action: vscode.CodeAction | vscode.Command): Promise<void> {
  if ('edit' in action || 'kind' in action) {
    const a = action as vscode.CodeAction;
    if (a.edit && !(await vscode.workspace.applyEdit(a.edit))) throw new Error(`VS Code refused the edit of "${a.title}"`);
    if (a.command) await run(a.command.command, ...(a.command.arguments ?? []));
    return;
  }
  const c = action as vscode.Command;
  await run(c.command, ...(c.arguments ?? []));
}

/** Code actions are resolved (their edits computed) up to this many per request. */
const RESOLVE = 50;

async function actionsOfKind(doc: vscode.TextDocument, kind: vscode.CodeActionKind): Promise<vscode.CodeAction[]> {
  const whole = doc.validateRange(new vscode.Range(0, 0, doc.lineCount, 0));
  const actions = (await run<Array<vscode.CodeAction>>('vscode.executeCodeActionProvider', doc.uri, whole, kind.value, RESOLVE)) ?? [];
  return actions.filter((a) => a.kind && kind.contains(a.kind));
}

/** Resolves when `doc` changes, or after `ms` (whichever comes first). */
function changeOf(doc: vscode.TextDocument, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      sub.dispose();
      resolve();
    };
    const sub = vscode.workspace.onDidChangeTextDocument((e) => e.document === doc && done());
    const timer = setTimeout(done, ms);
  });
}

/**
 * Applies the code actions of `kind` for the whole document (at most `max`). VS Code
 * refuses an edit made for an older version of the document, and the document can
 * change between computing the actions and applying them (a language server's
 * follow-up edit, or one of these actions when there are several). The extension host
 * can learn of that change only after the refusal, so a refusal is taken as staleness:
 * once the document has changed (or 500 ms have passed) the actions are computed again,
 * up to three times in all. Answers how many were applied.
 */
async function applyKind(doc: vscode.TextDocument, kind: vscode.CodeActionKind, max = Infinity): Promise<number> {
  let applied = 0;
  for (let attempt = 1; ; attempt++) {
    const version = doc.version;
    const actions = (await actionsOfKind(doc, kind)).slice(0, max - applied);
    try {
      for (const a of actions) {
        await apply(a);
        applied += 1;
      }
      return applied;
    } catch (e) {
      if (!/refused/.test(String(e)) || attempt >= 3 || applied >= max) throw e;
      if (doc.version === version) await changeOf(doc, 500);
    }
  }
}

export function register(c: Connection): void {
  c.handle('goToDefinition', async (p: Params) => {
    const { doc, pos } = await at(p);
    const found = (await run<Array<vscode.Location | vscode.LocationLink>>('vscode.executeDefinitionProvider', doc.uri, pos)) ?? [];
    return found.length ? found.map(locationOf) : null;
  });

  c.handle('findReferences', async (p: Params) => {
    const { doc, pos } = await at(p);
    const found = (await run<vscode.Location[]>('vscode.executeReferenceProvider', doc.uri, pos)) ?? [];
    const references = found.map(locationOf);
    return { references, count: references.length };
  });

  c.handle('getHover', async (p: Params) => {
    const { doc, pos } = await at(p);
    const hovers = (await run<vscode.Hover[]>('vscode.executeHoverProvider', doc.uri, pos)) ?? [];
    const contents = hovers.flatMap((h) => h.contents.map(markupText)).filter((t) => t.trim() !== '');
    if (!contents.length) return null;
    const range = hovers.find((h) => h.range)?.range;
    return { contents, range: range ? span(range) : null };
  });

  c.handle('getCodeActions', async (p: Params) => {
    const { doc, range } = await rangeOf(p);
    const actions = (await run<Array<vscode.CodeAction | vscode.Command>>('vscode.executeCodeActionProvider', doc.uri, range)) ?? [];
    return {
      actions: actions.map((a) => ({
        title: a.title,
        kind: 'kind' in a && a.kind ? a.kind.value : undefined,
        isPreferred: 'isPreferred' in a ? a.isPreferred === true : false,
      })),
    };
  });

  c.handle('applyCodeAction', async (p: Params) => {
    const { doc, range } = await rangeOf(p);
    const title = need<string>(p, 'actionTitle');
    const actions = (await run<Array<vscode.CodeAction | vscode.Command>>('vscode.executeCodeActionProvider', doc.uri, range, undefined, RESOLVE)) ?? [];
    const action = actions.find((a) => a.title === title);
    if (!action) return { applied: false, error: `no code action "${title}" here; available: ${actions.map((a) => a.title).join(', ') || 'none'}` };
    await apply(action);
    return { applied: true, title };
  });

  c.handle('renameSymbol', async (p: Params) => {
    const { doc, pos } = await at(p);
    const edit = await run<vscode.WorkspaceEdit>('vscode.executeDocumentRenameProvider', doc.uri, pos, need(p, 'newName'));
    if (!edit) return { success: false, error: 'no rename provider answered for this position' };
    const entries = edit.entries();
    const totalEdits = entries.reduce((n, [, edits]) => n + edits.length, 0);
    if (!(await vscode.workspace.applyEdit(edit))) return { success: false, error: 'VS Code refused the rename' };
    return { success: true, affectedFiles: entries.map(([uri]) => uri.fsPath), totalEdits };
  });

  c.handle('searchSymbols', async (p: Params) => {
    const max = limit(p, 50, 200);
    const found = (await run<vscode.SymbolInformation[]>('vscode.executeWorkspaceSymbolProvider', String(p.query ?? ''))) ?? [];
    const symbols = found.slice(0, max).map((s) => ({
      name: s.name,
      kind: symbolKind(s.kind),
      containerName: s.containerName || undefined,
      file: s.location.uri.fsPath,
      ...span(s.location.range),
    }));
    return { symbols, count: symbols.length, truncated: found.length > max };
  });

  c.handle('getDocumentSymbols', async (p: Params) => {
    const doc = await documentOf(need(p, 'file'));
    const found = (await run<Array<vscode.DocumentSymbol | vscode.SymbolInformation>>('vscode.executeDocumentSymbolProvider', doc.uri)) ?? [];
    const symbols = flatten(found);
    return { symbols, count: symbols.length };
  });

  c.handle('getCallHierarchy', async (p: Params) => {
    const { doc, pos } = await at(p);
    const items = (await run<vscode.CallHierarchyItem[]>('vscode.prepareCallHierarchy', doc.uri, pos)) ?? [];
    const root = items[0];
    if (!root) return null;
    const max = limit(p, 50, 200);
    const direction = String(p.direction ?? 'both');
    const result: Record<string, unknown> = { symbol: item(root) };
    if (direction !== 'outgoing') {
      const calls = (await run<vscode.CallHierarchyIncomingCall[]>('vscode.provideIncomingCalls', root)) ?? [];
      result.incoming = calls.slice(0, max).map((call) => ({ ...item(call.from), callSites: call.fromRanges.map(span) }));
    }
    if (direction !== 'incoming') {
      const calls = (await run<vscode.CallHierarchyOutgoingCall[]>('vscode.provideOutgoingCalls', root)) ?? [];
      result.outgoing = calls.slice(0, max).map((call) => ({ ...item(call.to), callSites: call.fromRanges.map(span) }));
    }
    return result;
  });

  c.handle('getTypeHierarchy', async (p: Params) => {
    const { doc, pos } = await at(p);
    const items = (await run<vscode.TypeHierarchyItem[]>('vscode.prepareTypeHierarchy', doc.uri, pos)) ?? [];
    const root = items[0];
    if (!root) return { found: false };
    const max = limit(p, 50, 200);
    const direction = String(p.direction ?? 'both');
    const result: Record<string, unknown> = { found: true, root: item(root) };
    if (direction !== 'subtypes') {
      result.supertypes = ((await run<vscode.TypeHierarchyItem[]>('vscode.provideSupertypes', root)) ?? []).slice(0, max).map(item);
    }
    if (direction !== 'supertypes') {
      result.subtypes = ((await run<vscode.TypeHierarchyItem[]>('vscode.provideSubtypes', root)) ?? []).slice(0, max).map(item);
    }
    return result;
  });

  c.handle('getInlayHints', async (p: Params) => {
    const doc = await documentOf(need(p, 'file'));
    const range = new vscode.Range(position(need(p, 'startLine'), 1), doc.validatePosition(position(need(p, 'endLine'), Number.MAX_SAFE_INTEGER)));
    const hints = (await run<vscode.InlayHint[]>('vscode.executeInlayHintProvider', doc.uri, range)) ?? [];
    return {
      hints: hints.map((h) => ({
        position: place(h.position),
        label: typeof h.label === 'string' ? h.label : h.label.map((part) => part.value).join(''),
        kind: h.kind === vscode.InlayHintKind.Type ? 'type' : h.kind === vscode.InlayHintKind.Parameter ? 'parameter' : 'other',
        tooltip: h.tooltip ? markupText(h.tooltip) : undefined,
      })),
      count: hints.length,
    };
  });

  c.handle('formatDocument', async (p: Params) => {
    const doc = await documentOf(need(p, 'file'));
    const editor = vscode.window.visibleTextEditors.find((e) => e.document === doc);
    const options = { tabSize: Number(editor?.options.tabSize ?? 4), insertSpaces: editor?.options.insertSpaces !== false };
    const edits = (await run<vscode.TextEdit[]>('vscode.executeFormatDocumentProvider', doc.uri, options)) ?? [];
    if (edits.length) {
      const edit = new vscode.WorkspaceEdit();
      edit.set(doc.uri, edits);
      if (!(await vscode.workspace.applyEdit(edit))) throw new Error('VS Code refused the formatting edits');
    }
    return { success: true, editsApplied: edits.length };
  });

  c.handle('organizeImports', async (p: Params) => {
    const doc = await documentOf(need(p, 'file'));
    const applied = await applyKind(doc, vscode.CodeActionKind.SourceOrganizeImports, 1);
    return { success: true, actionsApplied: applied };
  });

  c.handle('fixAllLintErrors', async (p: Params) => {
    const doc = await documentOf(need(p, 'file'));
    let applied = await applyKind(doc, vscode.CodeActionKind.SourceFixAll);
    if (applied === 0) {
      // No fix-all provider: the preferred quick fix of each diagnostic.
      for (const d of vscode.languages.getDiagnostics(doc.uri)) {
        const quick = (await run<vscode.CodeAction[]>('vscode.executeCodeActionProvider', doc.uri, d.range, vscode.CodeActionKind.QuickFix.value, RESOLVE)) ?? [];
        const preferred = quick.find((a) => a.isPreferred);
        if (preferred) {
          await apply(preferred);
          applied += 1;
        }
      }
    }
    return { success: true, actionsApplied: applied };
  });
}
