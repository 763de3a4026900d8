// ide-bridge for VS Code (and Cursor, Windsurf, code-server): connects the editor to the
// bridge serving the workspace, answers every method of the extension protocol with the
// VS Code API, and pushes selections, diagnostics, saves, AI comments and debug state.
import * as vscode from 'vscode';

import { Changes } from './changes';
import { Connection, State } from './connection';
import { Debug } from './handlers/debug';
import { Diffs } from './handlers/diff';
import * as files from './handlers/files';
import * as lsp from './handlers/lsp';
import { Misc } from './handlers/misc';
import { Terminals } from './handlers/terminals';
import { Log } from './log';
import { Push } from './push';
import { Ui } from './ui';

/** What the extension exports (for other extensions and its own tests). */
export interface Api {
  state(): State;
  /** Resolves once connected (rejects after `timeoutMs`). */
  connected(timeoutMs?: number): Promise<void>;
  /** Agents connected to the bridge, as it last said. */
  agents(): number;
  /** The protocol methods answered. */
  methods(): string[];
  statusText(): string;
  port(): number | undefined;
  /** The lines agents changed in `file` (absolute) that the person has not decided on. */
  agentChanges(file: string): { startLine: number; endLine: number; agent: string; session: string }[];
}

export function activate(context: vscode.ExtensionContext): Api {
  const settings = () => vscode.workspace.getConfiguration('ideBridge');
  /** A setting only the user may set (what agents are allowed, what binary runs): a
   * workspace's `.vscode/settings.json`, which agents can write, is never read for it. */
  const userSetting = <T>(key: string, fallback: T): T => {
    const i = settings().inspect<T>(key);
    return i?.globalValue ?? i?.defaultValue ?? fallback;
  };
  const log = new Log();
  const version = String(context.extension.packageJSON.version ?? '0.0.0');
  const folders = () => (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath);
  const connection = new Connection(log, version, folders, () => userSetting<string>('configDir', ''));

  const diffs = new Diffs(log);
  let push: Push | undefined;
  const debug = new Debug(() => push?.debugChanged());
  const terminals = new Terminals(() => settings().get<number>('maxTerminalWaitMs', 600000));
  const misc = new Misc(
    connection,
    {
      allowCommands: () => userSetting<boolean>('allowCommands', false),
      allowedCommands: () => userSetting<string[]>('allowedCommands', []),
      allowedSettings: () => userSetting<string[]>('allowedSettings', []),
    },
    log,
  );
  files.register(connection);
  lsp.register(connection);
  terminals.register(connection);
  debug.register(connection);
  misc.register(connection);
  diffs.register(connection);
  push = new Push(connection, debug, () => settings().get<boolean>('aiComments', true));
  const ui = new Ui(connection, log, context.globalStorageUri, () => userSetting<string>('bridgePath', ''));
  const changes = new Changes(connection);

  connection.onNotification('bridge/closeDiff', (p) => diffs.withdraw(String(p.tabName ?? '')));
  connection.onNotification('bridge/automationNotice', (p) => {
    void vscode.window.showInformationMessage(`ide-bridge automation (${p.hook}): ${p.message ?? p.subject ?? ''}`);
  });
  connection.onNotification('bridge/claudeTaskOutput', (p) => log.info(`task ${p.taskId ?? ''}: ${String(p.text ?? p.output ?? '')}`));
  connection.onNotification('bridge/claudeConnectionChanged', (p) => log.info(`${p.agents ?? 0} agents connected to the bridge`));
  connection.onState((state) => {
    if (state !== 'connected') diffs.closeAll();
  });

  context.subscriptions.push(log, connection, diffs, debug, terminals, misc, push, ui, changes);

  if (settings().get<boolean>('autoConnect', true)) {
    connection.start();
    if (userSetting<boolean>('autoStart', false)) {
      // Give an already running bridge the first look.
      setTimeout(() => {
        if (connection.state === 'searching') void ui.startBridge();
      }, 500);
    }
  }

  return {
    state: () => connection.state,
    connected: (timeoutMs = 10000) =>
      new Promise<void>((resolve, reject) => {
        if (connection.state === 'connected') return resolve();
        const timer = setTimeout(() => {
          sub.dispose();
          reject(new Error(`not connected within ${timeoutMs} ms (state: ${connection.state})`));
        }, timeoutMs);
        const sub = connection.onState((s) => {
          if (s === 'connected') {
            clearTimeout(timer);
            sub.dispose();
            resolve();
          }
        });
      }),
    agents: () => connection.agents,
    methods: () => connection.methods(),
    statusText: () => ui.text(),
    port: () => connection.lock?.port,
    agentChanges: (file: string) => changes.runs(file),
  };
}

export function deactivate(): void {
  // Everything is in context.subscriptions.
}
