// The connection to the bridge: finds it (lock files), connects on the extension socket
// with the token, says hello, answers the bridge's `extension/*` requests through the
// registered handlers, and reconnects with backoff whenever the bridge goes away.
import * as vscode from 'vscode';
import WebSocket from 'ws';

import { editorConnected, type Claim } from './bridgeHttp';
import { findBridge, ideDir, Lock } from './discovery';
import { errorText, Log } from './log';

/** Params of a request or notification, as sent. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Params = any;
/** Answers one `extension/<name>` request; throwing answers an error with its message. */
export type Handler = (params: Params) => unknown | Promise<unknown>;

/** `standby`: another editor window holds the bridge; this one waits for it to leave. */
export type State = 'stopped' | 'searching' | 'connecting' | 'connected' | 'standby';

/** An agent as the bridge reports it (from `/status`). */
export interface AgentInfo {
  id: string;
  client?: string;
  connected: boolean;
}

const RECONNECT_MIN_MS = 200;
const RECONNECT_MAX_MS = 2000;
/** How often the lock files are read again while no bridge serves the workspace. */
const SEARCH_EVERY_MS = 2000;
/** The bridge's close reason when a newer editor connection took this one's place. */
const REPLACED = 'replaced by a newer editor connection';
/** Largest message accepted from the bridge. */
const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

export class Connection implements vscode.Disposable {
  private ws: WebSocket | undefined;
  private timer: NodeJS.Timeout | undefined;
  private backoff = RECONNECT_MIN_MS;
  private wanted = false;
  private readonly handlers = new Map<string, Handler>();
  private readonly notificationHandlers = new Map<string, (params: Params) => void>();
  private readonly stateEmitter = new vscode.EventEmitter<State>();
  /** Fires on every change of state. */
  readonly onState = this.stateEmitter.event;
  state: State = 'stopped';
  lock: Lock | undefined;
  /** File claims held now, from the bridge's last `bridge/claimsChanged` (or `/status`). */
  claims: Claim[] = [];
  /** How many `bridge/claimsChanged` arrived: a `/status` read sent before the last one is older than it. */
  claimsSeen = 0;
  /** Agents connected to the bridge, from its last `bridge/claudeConnectionChanged`. */
  agents = 0;

  constructor(
    private readonly log: Log,
    private readonly version: string,
    private readonly folders: () => string[],
    private readonly configDir: () => string,
  ) {}

  /** Registers the handler of `extension/<method>`. */
  handle(method: string, handler: Handler): void {
    this.handlers.set(`extension/${method}`, handler);
  }

  /** Registers what to do with a notification from the bridge. */
  onNotification(method: string, f: (params: Params) => void): void {
    this.notificationHandlers.set(method, f);
  }

  /** The methods with a handler. */
  methods(): string[] {
    return [...this.handlers.keys()].map((m) => m.replace(/^extension\//, ''));
  }

  /** Sends a notification when connected; dropped (false) otherwise. */
  notify(method: string, params: Params): boolean {
    if (this.state !== 'connected' || !this.ws) return false;
    this.ws.send(JSON.stringify({ jsonrpc: '2.0', method, params }));
    return true;
  }

  /** Connects, and keeps reconnecting until `stop`. */
  start(): void {
    this.wanted = true;
    if (this.state === 'stopped') this.attempt();
  }

  stop(): void {
    this.wanted = false;
    this.clearTimer();
    this.ws?.terminate();
    this.ws = undefined;
    this.setState('stopped');
  }

  /** Drops the connection and connects again at once (re-reading the lock files). */
  restart(): void {
    this.stop();
    this.backoff = RECONNECT_MIN_MS;
    this.start();
  }

  private setState(state: State): void {
    if (this.state === state) return;
    this.state = state;
    this.stateEmitter.fire(state);
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private later(ms: number): void {
    this.clearTimer();
    if (this.wanted) this.timer = setTimeout(() => this.attempt(), ms);
  }

  private attempt(): void {
    this.timer = undefined;
    if (!this.wanted) return;
    const lock = findBridge(ideDir(this.configDir()), this.folders());
    if (!lock) {
      if (this.state !== 'searching') this.log.info(`no bridge serves ${this.folders().join(', ') || 'this window'}; looking again every ${SEARCH_EVERY_MS / 1000} s`);
      this.lock = undefined;
      this.setState('searching');
      this.later(SEARCH_EVERY_MS);
      return;
    }
    this.lock = lock;
    this.setState('connecting');
    const ws = new WebSocket(`ws://127.0.0.1:${lock.port}/`, {
      headers: { 'x-claude-ide-extension': lock.authToken },
      perMessageDeflate: false,
      maxPayload: MAX_MESSAGE_BYTES,
      handshakeTimeout: 5000,
    });
    this.ws = ws;
    ws.on('open', () => {
      this.backoff = RECONNECT_MIN_MS;
      this.log.info(`connected to the bridge on port ${lock.port} (pid ${lock.pid}) serving ${lock.workspaceFolders.join(', ')}`);
      ws.send(
        JSON.stringify({
          jsonrpc: '2.0',
          method: 'extension/hello',
          params: { extensionVersion: this.version, packageVersion: `vscode ${vscode.version}` },
        }),
      );
      this.setState('connected');
    });
    ws.on('message', (data) => this.onMessage(ws, data.toString()));
    ws.on('unexpected-response', (_req, res) => {
      const retry = Number(res.headers['retry-after'] ?? 0) * 1000;
      this.log.warn(`the bridge on port ${lock.port} refused the connection: HTTP ${res.statusCode}`);
      ws.terminate();
      this.dropped(ws, res.statusCode === 429 && retry > 0 ? retry : undefined);
    });
    ws.on('error', (e) => {
      this.log.warn(`connection to the bridge on port ${lock.port}: ${errorText(e)}`);
    });
    ws.on('close', (code, reason) => {
      if (this.ws === ws) this.log.info(`disconnected from the bridge (${code}${reason.length ? ': ' + reason.toString() : ''})`);
      this.dropped(ws, undefined, reason.toString().includes(REPLACED));
    });
  }

  /** Another window took the bridge: reconnecting would take it back, and that window
   * would do the same, for ever. Asks `/status` (which takes nothing from the other)
   * whether an editor is connected, and connects once none is. */
  private standBy(): void {
    this.setState('standby');
    this.clearTimer();
    if (!this.wanted) return;
    this.timer = setTimeout(() => {
      const lock = this.lock;
      if (!this.wanted || this.state !== 'standby' || !lock) return;
      editorConnected(lock).then(
        (held) => {
          if (this.state !== 'standby') return;
          if (held) this.standBy();
          else this.attempt();
        },
        // No answer (busy, restarting): the same bridge still holds the other editor;
        // a bridge that changed (or went) is looked for again.
        () => {
          if (this.state !== 'standby') return;
          const now = findBridge(ideDir(this.configDir()), this.folders());
          if (now && now.port === lock.port && now.pid === lock.pid) this.standBy();
          else this.attempt();
        },
      );
    }, SEARCH_EVERY_MS);
  }

  private dropped(ws: WebSocket, after?: number, replaced = false): void {
    if (this.ws !== ws) return;
    this.ws = undefined;
    this.agents = 0;
    this.claims = [];
    if (!this.wanted) return;
    if (replaced) {
      this.log.warn('another editor window connected to this bridge; this one stands by and reconnects when that one closes (ide-bridge: Restart the Connection takes the bridge back)');
      this.standBy();
      return;
    }
    this.setState('searching');
    const jitter = Math.random() * this.backoff * 0.5;
    this.later(after ?? this.backoff + jitter);
    this.backoff = Math.min(this.backoff * 2, RECONNECT_MAX_MS);
  }

  private onMessage(ws: WebSocket, text: string): void {
    let msg: { id?: unknown; method?: string; params?: Params };
    try {
      msg = JSON.parse(text);
    } catch {
      this.log.warn('ignoring a message from the bridge that is not JSON');
      return;
    }
    if (typeof msg.method !== 'string') return; // answers to nothing we asked
    if (msg.id === undefined || msg.id === null) {
      if (msg.method === 'bridge/claudeConnectionChanged') this.agents = Number(msg.params?.agents ?? 0);
      if (msg.method === 'bridge/claimsChanged') {
        this.claims = (msg.params?.claims as Claim[] | undefined) ?? [];
        this.claimsSeen++;
      }
      const f = this.notificationHandlers.get(msg.method);
      if (f) f(msg.params ?? {});
      this.stateEmitter.fire(this.state);
      return;
    }
    const id = msg.id;
    const reply = (body: object) => {
      if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ jsonrpc: '2.0', id, ...body }));
    };
    const handler = this.handlers.get(msg.method);
    if (!handler) {
      reply({ error: { code: -32601, message: `Method not found: ${msg.method}` } });
      return;
    }
    Promise.resolve()
      .then(() => handler(msg.params ?? {}))
      .then(
        (result) => reply({ result: result === undefined ? null : result }),
        (e) => reply({ error: { code: -32000, message: errorText(e) } }),
      );
  }

  dispose(): void {
    this.stop();
    this.stateEmitter.dispose();
  }
}
