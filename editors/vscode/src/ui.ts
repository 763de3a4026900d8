// What the user sees and does: the status bar item, the commands (send the selection or
// file to an agent, open the bridge's page, restart the connection, start a bridge, show
// the status and the log).
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';

import { Claim, claims, pageLink, sessions } from './bridgeHttp';
import { Connection } from './connection';
import { errorText, Log } from './log';

interface AgentPick extends vscode.QuickPickItem {
  sessionId?: string;
}

export class Ui implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private readonly disposables: vscode.Disposable[] = [];
  private lastState = '';

  constructor(
    private readonly connection: Connection,
    private readonly log: Log,
    private readonly storage: vscode.Uri,
    private readonly bridgePath: () => string,
  ) {
    this.item = vscode.window.createStatusBarItem('ideBridge.status', vscode.StatusBarAlignment.Right, 100);
    this.item.name = 'ide-bridge';
    this.item.command = 'ideBridge.showStatus';
    this.disposables.push(
      this.item,
      connection.onState((state) => {
        this.render();
        // (Every notification from the bridge fires this too: read only on a new connection.)
        const fresh = state === 'connected' && this.lastState !== 'connected';
        this.lastState = state;
        if (fresh && connection.lock) {
          // Claims made before this connection: the notifications only say what changes.
          const lock = connection.lock;
          const seen = connection.claimsSeen;
          claims(lock)
            .then((held) => {
              if (connection.lock === lock && connection.claimsSeen === seen) {
                connection.claims = held;
                this.render();
              }
            })
            .catch((e) => log.warn(`could not read the file claims: ${errorText(e)}`));
        }
      }),
      vscode.window.onDidChangeActiveTextEditor(() => this.render()),
      vscode.commands.registerCommand('ideBridge.showStatus', () => this.showStatus()),
      vscode.commands.registerCommand('ideBridge.sendSelection', () => this.send(true)),
      vscode.commands.registerCommand('ideBridge.sendFile', () => this.send(false)),
      vscode.commands.registerCommand('ideBridge.openDashboard', () => this.openDashboard()),
      vscode.commands.registerCommand('ideBridge.reconnect', () => {
        this.log.info('restarting the connection (command)');
        connection.restart();
      }),
      vscode.commands.registerCommand('ideBridge.startBridge', () => this.startBridge()),
      vscode.commands.registerCommand('ideBridge.showLog', () => log.channel.show(true)),
    );
    this.render();
    this.item.show();
  }

  /** The status bar item's text: connected or not, and how many agents. */
  text(): string {
    return this.item.text;
  }

  private render(): void {
    const c = this.connection;
    switch (c.state) {
      case 'connected': {
        const n = c.agents;
        let text = `$(plug) ide-bridge: ${n} ${n === 1 ? 'agent' : 'agents'}`;
        const held = c.claims;
        if (held.length) text += ` · $(lock) ${held.length} ${held.length === 1 ? 'claim' : 'claims'}`;
        const mine = this.claimOfActiveFile();
        if (mine) text += ` · claimed by ${mine.holder}`;
        this.item.text = text;
        const listed = held.map((cl) => `\n• ${cl.patterns.join(', ')}: ${cl.holder}${cl.reason ? ` (${cl.reason})` : ''}`).join('');
        this.item.tooltip = `Connected to the bridge on port ${c.lock?.port} serving ${c.lock?.workspaceFolders.join(', ')}.${held.length ? `\nFile claims (other agents' edits of these files are refused):${listed}` : ''}\nClick for details.`;
        this.item.backgroundColor = undefined;
        break;
      }
      case 'connecting':
        this.item.text = '$(sync~spin) ide-bridge';
        this.item.tooltip = `Connecting to the bridge on port ${c.lock?.port}…`;
        break;
      case 'standby':
        this.item.text = '$(debug-pause) ide-bridge';
        this.item.tooltip = 'Another editor window holds the bridge for this workspace; this one reconnects when that one closes. Click to reconnect now (takes the bridge back).';
        this.item.backgroundColor = undefined;
        break;
      case 'searching':
        this.item.text = '$(debug-disconnect) ide-bridge';
        this.item.tooltip = 'No bridge serves this workspace. Click to start one or see why.';
        this.item.backgroundColor = new vscode.ThemeColor('statusBarItem.warningBackground');
        break;
      default:
        this.item.text = '$(circle-slash) ide-bridge';
        this.item.tooltip = 'Not connecting (ideBridge.autoConnect is off). Click for actions.';
        this.item.backgroundColor = undefined;
    }
  }

  /** The claim covering the active editor's file: the path itself or a directory above
   * it (globs are listed, not matched). */
  private claimOfActiveFile(): Claim | undefined {
    const file = vscode.window.activeTextEditor?.document.uri.fsPath;
    const root = this.connection.lock?.workspaceFolders.find((w) => file?.startsWith(w + path.sep));
    if (!file || !root) return undefined;
    const rel = path.relative(root, file).split(path.sep).join('/');
    return this.connection.claims.find((cl) =>
      cl.patterns.some((p) => {
        const bare = p.replace(/\/$/, '');
        return rel === bare || rel.startsWith(bare + '/');
      }),
    );
  }

  private async showStatus(): Promise<void> {
    const c = this.connection;
    const items: Array<vscode.QuickPickItem & { run?: () => unknown }> = [];
    if (c.state === 'connected' && c.lock) {
      items.push({ label: `$(plug) Connected to the bridge on port ${c.lock.port}`, detail: `pid ${c.lock.pid}, serving ${c.lock.workspaceFolders.join(', ')}` });
      try {
        for (const s of await sessions(c.lock)) {
          items.push({ label: `$(hubot) ${s.client ?? 'agent'}`, description: s.id, detail: s.connected ? 'connected' : 'waiting for it to come back' });
        }
      } catch (e) {
        items.push({ label: `$(warning) ${errorText(e)}` });
      }
      for (const cl of c.claims) {
        items.push({ label: `$(lock) ${cl.patterns.join(', ')}`, description: cl.holder, detail: `${cl.reason || 'no reason given'}; ends in ${Math.ceil(cl.expiresInSeconds / 60)} min` });
      }
      items.push({ label: '$(globe) Open the bridge\'s page', run: () => this.openDashboard() });
    } else if (c.state === 'standby') {
      items.push({ label: '$(debug-pause) Standing by', detail: 'Another editor window holds the bridge for this workspace; this one reconnects when that one closes.' });
    } else {
      items.push({ label: `$(debug-disconnect) Not connected (${c.state})`, detail: 'The extension connects to the bridge whose workspace contains this window\'s folders.' });
      items.push({ label: '$(play) Start a bridge for this workspace', run: () => this.startBridge() });
    }
    items.push({ label: '$(refresh) Restart the connection', run: () => c.restart() });
    items.push({ label: '$(output) Show the log', run: () => this.log.channel.show(true) });
    const picked = await vscode.window.showQuickPick(items, { title: 'ide-bridge' });
    await picked?.run?.();
  }

  /** Who gets a mention: the only agent, or the one the user picks (or all). */
  private async pickAgent(): Promise<AgentPick | undefined> {
    const lock = this.connection.lock;
    if (!lock) return { label: 'all' };
    const listening = (await sessions(lock)).filter((s) => s.connected && s.initialized);
    if (listening.length <= 1) return { label: 'all' };
    return vscode.window.showQuickPick<AgentPick>(
      [
        { label: 'All agents', sessionId: undefined },
        ...listening.map((s) => ({ label: s.client ?? 'agent', description: s.id, sessionId: s.id })),
      ],
      { title: 'Send to which agent?' },
    );
  }

  private async send(selection: boolean): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    if (!editor || editor.document.uri.scheme !== 'file') {
      void vscode.window.showWarningMessage('ide-bridge: open a file first');
      return;
    }
    if (this.connection.state !== 'connected') {
      void vscode.window.showWarningMessage('ide-bridge: not connected to a bridge');
      return;
    }
    try {
      const agent = await this.pickAgent();
      if (!agent) return;
      const params: Record<string, unknown> = { filePath: editor.document.uri.fsPath };
      if (selection && !editor.selection.isEmpty) {
        const s = editor.selection;
        // The end line of a selection that stops at a line's start is the line before.
        const end = s.end.character === 0 && s.end.line > s.start.line ? s.end.line - 1 : s.end.line;
        params.lineStart = s.start.line;
        params.lineEnd = end;
      }
      if (agent.sessionId) params.sessionId = agent.sessionId;
      this.connection.notify('extension/atMentioned', params);
      const where = params.lineStart === undefined ? '' : `#L${Number(params.lineStart) + 1}-${Number(params.lineEnd) + 1}`;
      vscode.window.setStatusBarMessage(`ide-bridge: sent @${path.basename(editor.document.uri.fsPath)}${where} to ${agent.sessionId ? agent.label : 'the agents'}`, 4000);
    } catch (e) {
      void vscode.window.showErrorMessage(`ide-bridge: ${errorText(e)}`);
    }
  }

  /** Opens the bridge's page through a one-time link; answers the link. In a remote or
   * web window (code-server, Remote-SSH) the editor would send the link through its port
   * forwarding, which the page refuses (its Host must be the bridge's own), so there the
   * link is shown to copy instead. */
  private async openDashboard(): Promise<string | undefined> {
    const lock = this.connection.lock;
    if (!lock) {
      void vscode.window.showWarningMessage('ide-bridge: not connected to a bridge');
      return undefined;
    }
    try {
      const url = await pageLink(lock);
      const local = vscode.env.uiKind === vscode.UIKind.Desktop && vscode.env.remoteName === undefined;
      if (local) {
        await vscode.env.openExternal(vscode.Uri.parse(url));
      } else {
        void vscode.window
          .showInformationMessage(`The bridge's page (the link works once, for a few minutes): ${url}`, 'Copy link')
          .then((choice) => (choice ? vscode.env.clipboard.writeText(url) : undefined));
      }
      this.log.info(`a one-time link to the bridge's page was ${local ? 'opened' : 'shown'}`);
      return url;
    } catch (e) {
      void vscode.window.showErrorMessage(`ide-bridge: could not open the bridge's page: ${errorText(e)}`);
      return undefined;
    }
  }

  /** Starts `ide-bridge --workspace <folder>` detached, logging to the extension's storage. */
  async startBridge(): Promise<boolean> {
    const folder = vscode.workspace.workspaceFolders?.[0];
    if (!folder) {
      void vscode.window.showWarningMessage('ide-bridge: open a folder first');
      return false;
    }
    const configured = this.bridgePath().trim();
    const binary = configured || 'ide-bridge';
    fs.mkdirSync(this.storage.fsPath, { recursive: true });
    const logPath = path.join(this.storage.fsPath, 'bridge.log');
    // The bridge's log may hold sign-in links: readable by the user only.
    const out = fs.openSync(logPath, 'a', 0o600);
    return new Promise((resolve) => {
      const child = spawn(binary, ['--workspace', folder.uri.fsPath, '--on-demand'], { detached: true, stdio: ['ignore', out, out], cwd: folder.uri.fsPath });
      child.on('error', (e) => {
        fs.closeSync(out);
        this.log.error(`could not start ${binary}: ${errorText(e)}`);
        void vscode.window.showErrorMessage(`ide-bridge: could not start "${binary}" (${errorText(e)}). Set ideBridge.bridgePath to the binary, or put ide-bridge on PATH.`);
        resolve(false);
      });
      child.on('spawn', () => {
        fs.closeSync(out);
        child.unref();
        this.log.info(`started ${binary} --workspace ${folder.uri.fsPath} (pid ${child.pid}; its log: ${logPath})`);
        this.connection.restart();
        resolve(true);
      });
    });
  }

  dispose(): void {
    this.disposables.forEach((d) => d.dispose());
  }
}
