// `openDiff` in VS Code's own diff editor: the file as it is on the left, the agent's
// proposal on the right, editable. Accept (the ✓ in the editor title, the command, or
// saving the proposal) answers FILE_SAVED with the proposal's text including the user's
// edits; Reject (✕, the command, or closing the diff) answers DIFF_REJECTED. The file
// itself is not written: the agent does that, as the protocol says.
import * as path from 'path';
import * as vscode from 'vscode';

import { Connection, Params } from '../connection';
import { Log } from '../log';
import { need, uriOf } from '../util';

export const PROPOSED_SCHEME = 'ide-bridge-proposed';

interface Pending {
  tab: string;
  proposed: vscode.Uri;
  original: vscode.Uri;
  settle(answer: { decision: 'FILE_SAVED'; content: string } | { decision: 'DIFF_REJECTED' }): void;
  settled: boolean;
}

/** The proposals, in memory: readable, writable (saving one accepts it), never on disk. */
class Proposals implements vscode.FileSystemProvider {
  private readonly files = new Map<string, Uint8Array>();
  private readonly emitter = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  readonly onDidChangeFile = this.emitter.event;
  /** Called when the user saves a proposal. */
  onSave: (uri: vscode.Uri, content: Uint8Array) => void = () => undefined;

  set(uri: vscode.Uri, content: string): void {
    this.files.set(uri.toString(), Buffer.from(content, 'utf8'));
  }

  delete(uri: vscode.Uri): void {
    this.files.delete(uri.toString());
  }

  watch(): vscode.Disposable {
    return new vscode.Disposable(() => undefined);
  }

  stat(uri: vscode.Uri): vscode.FileStat {
    const data = this.files.get(uri.toString());
    if (!data) throw vscode.FileSystemError.FileNotFound(uri);
    return { type: vscode.FileType.File, ctime: 0, mtime: Date.now(), size: data.length };
  }

  readDirectory(): [string, vscode.FileType][] {
    return [];
  }

  createDirectory(): void {
    throw vscode.FileSystemError.NoPermissions('proposals have no directories');
  }

  readFile(uri: vscode.Uri): Uint8Array {
    const data = this.files.get(uri.toString());
    if (!data) throw vscode.FileSystemError.FileNotFound(uri);
    return data;
  }

  writeFile(uri: vscode.Uri, content: Uint8Array): void {
    if (!this.files.has(uri.toString())) throw vscode.FileSystemError.FileNotFound(uri);
    this.files.set(uri.toString(), content);
    this.onSave(uri, content);
  }

  rename(): void {
    throw vscode.FileSystemError.NoPermissions('proposals cannot be renamed');
  }
}

export class Diffs implements vscode.Disposable {
  private readonly proposals = new Proposals();
  private readonly pending = new Map<string, Pending>();
  private readonly disposables: vscode.Disposable[] = [];
  private next = 0;
  /** Proposals the user is saving by hand (Ctrl+S): only those saves accept. */
  private readonly manualSaves = new Set<string>();

  constructor(private readonly log: Log) {
    this.disposables.push(
      vscode.workspace.registerFileSystemProvider(PROPOSED_SCHEME, this.proposals, { isCaseSensitive: true }),
      vscode.window.tabGroups.onDidChangeTabs((e) => {
        // A diff closed by the user (its last tab: a split shows it twice) rejects it.
        for (const tab of e.closed) {
          const input = tab.input;
          if (input instanceof vscode.TabInputTextDiff && input.modified.scheme === PROPOSED_SCHEME) {
            const p = this.byProposed(input.modified);
            // Looked at once the tab groups have settled (a split's other tab may remain).
            if (p && !p.settled) setTimeout(() => !p.settled && this.tabsOf(p).length === 0 && this.reject(p, 'its tab was closed'), 50);
          }
        }
      }),
      vscode.workspace.onWillSaveTextDocument((e) => {
        if (e.document.uri.scheme === PROPOSED_SCHEME && e.reason === vscode.TextDocumentSaveReason.Manual) {
          this.manualSaves.add(e.document.uri.toString());
        }
      }),
      vscode.commands.registerCommand('ideBridge.acceptDiff', (uri?: vscode.Uri) => this.decide(true, uri)),
      vscode.commands.registerCommand('ideBridge.rejectDiff', (uri?: vscode.Uri) => this.decide(false, uri)),
    );
    // Saving the proposal by hand accepts it; an auto-save only keeps the edit.
    this.proposals.onSave = (uri) => {
      const manual = this.manualSaves.delete(uri.toString());
      const p = this.byProposed(uri);
      if (p && !p.settled && manual) void this.accept(p);
    };
  }

  /** The open tabs showing diff `p`. */
  private tabsOf(p: Pending): vscode.Tab[] {
    return vscode.window.tabGroups.all
      .flatMap((g) => g.tabs)
      .filter((t) => t.input instanceof vscode.TabInputTextDiff && t.input.modified.toString() === p.proposed.toString());
  }

  private byProposed(uri: vscode.Uri): Pending | undefined {
    return [...this.pending.values()].find((p) => p.proposed.toString() === uri.toString());
  }

  /** The diff a command means: the one whose proposal `uri` is, else the active one, else the only one. */
  private target(uri?: vscode.Uri): Pending | undefined {
    if (uri?.scheme === PROPOSED_SCHEME) return this.byProposed(uri);
    const active = vscode.window.activeTextEditor?.document.uri;
    if (active?.scheme === PROPOSED_SCHEME) return this.byProposed(active);
    const tab = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
    if (tab instanceof vscode.TabInputTextDiff && tab.modified.scheme === PROPOSED_SCHEME) return this.byProposed(tab.modified);
    return this.pending.size === 1 ? [...this.pending.values()][0] : undefined;
  }

  private async decide(accept: boolean, uri?: vscode.Uri): Promise<void> {
    const p = this.target(uri);
    if (!p) {
      void vscode.window.showWarningMessage('ide-bridge: no proposed change is open here');
      return;
    }
    if (accept) await this.accept(p);
    else this.reject(p, 'the user rejected it');
  }

  private async accept(p: Pending): Promise<void> {
    const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === p.proposed.toString());
    const content = doc ? doc.getText() : Buffer.from(this.proposals.readFile(p.proposed)).toString('utf8');
    this.log.info(`accepted the change in "${p.tab}"`);
    p.settle({ decision: 'FILE_SAVED', content });
    await this.close(p, doc);
  }

  private reject(p: Pending, why: string): void {
    this.log.info(`rejected the change in "${p.tab}": ${why}`);
    p.settle({ decision: 'DIFF_REJECTED' });
    void this.close(p);
  }

  /** Closes a settled diff's tab without asking to save (the proposal is in memory). */
  private async close(p: Pending, doc?: vscode.TextDocument): Promise<void> {
    if (this.pending.get(p.tab) === p) this.pending.delete(p.tab);
    void vscode.commands.executeCommand('setContext', 'ideBridge.diffOpen', this.pending.size > 0);
    const d = doc ?? vscode.workspace.textDocuments.find((x) => x.uri.toString() === p.proposed.toString());
    if (d?.isDirty) await d.save(); // settled: the provider takes it silently, and no prompt asks
    const tabs = this.tabsOf(p);
    if (tabs.length) await vscode.window.tabGroups.close(tabs, true);
    this.proposals.delete(p.proposed);
    this.proposals.delete(p.original);
  }

  /** The bridge withdrew a diff (`bridge/closeDiff`): it has answered the agent already. */
  withdraw(tab: string): void {
    const p = this.pending.get(tab);
    if (p && !p.settled) this.reject(p, 'the agent withdrew it');
  }

  /** The connection is gone: nobody waits for the answers any more. */
  closeAll(): void {
    for (const p of [...this.pending.values()]) this.reject(p, 'the connection to the bridge closed');
  }

  register(c: Connection): void {
    c.handle('openDiff', async (p: Params) => {
      const tab = String(need(p, 'tabName'));
      const oldPath = String(need(p, 'oldFilePath'));
      const newPath = String(p.newFilePath ?? oldPath);
      const contents = String(p.newFileContents ?? '');
      this.withdraw(tab); // a new diff in the same tab replaces the old one
      const id = ++this.next;
      const name = path.basename(newPath);
      const proposed = vscode.Uri.from({ scheme: PROPOSED_SCHEME, path: `/${id}/${name}` });
      this.proposals.set(proposed, contents);
      // Registered before anything is awaited, so a `bridge/closeDiff` or a dropped
      // connection that comes meanwhile finds it.
      let pending!: Pending;
      const answer = new Promise<object>((resolve) => {
        pending = {
          tab,
          proposed,
          original: uriOf(oldPath),
          settled: false,
          settle: (a) => {
            if (pending.settled) return;
            pending.settled = true;
            resolve(a);
          },
        };
        this.pending.set(tab, pending);
      });
      try {
        await vscode.workspace.fs.stat(pending.original);
      } catch {
        // A new file: compare with nothing.
        pending.original = vscode.Uri.from({ scheme: PROPOSED_SCHEME, path: `/${id}/original/${name}` });
        this.proposals.set(pending.original, '');
      }
      if (pending.settled) return answer;
      await vscode.commands.executeCommand('setContext', 'ideBridge.diffOpen', true);
      // The answer does not wait for the editor to finish opening: the user may decide
      // (or the agent withdraw) while it opens.
      vscode.commands
        .executeCommand('vscode.diff', pending.original, proposed, `${name} ↔ proposed by the agent (${tab})`, { preview: false })
        .then(
          // Decided while it opened: its tab is closed now that it exists.
          () => (pending.settled ? this.close(pending) : undefined),
          (e: unknown) => {
          this.log.error(`could not show the diff "${tab}": ${e instanceof Error ? e.message : String(e)}`);
          this.reject(pending, 'VS Code could not show it');
          },
        );
      this.log.info(`showing the change to ${newPath} in "${tab}"`);
      return answer;
    });
  }

  dispose(): void {
    this.closeAll();
    this.disposables.forEach((d) => d.dispose());
  }
}
