// Debugging through `vscode.debug`: the active session, whether it is paused (a debug
// adapter tracker watches `stopped`/`continued`), its stack and scopes, evaluation,
// source breakpoints, starting and stopping; state changes are pushed to the bridge as
// `extension/debugSessionChanged`.
import * as vscode from 'vscode';

import { Connection, Params } from '../connection';
import { need, position, uriOf } from '../util';

/** A debug adapter request; a failure names the request. */
async function ask(session: vscode.DebugSession, command: string, args?: object): Promise<any> { // eslint-disable-line @typescript-eslint/no-explicit-any
  try {
    return await session.customRequest(command, args);
  } catch (e) {
    throw new Error(`the debugger refused ${command} (${session.name}): ${e instanceof Error ? e.message : String(e)}`);
  }
}

interface Paused {
  /** The session that stopped (js-debug pauses in a child of the session it launched). */
  session: vscode.DebugSession;
  threadId?: number;
  reason?: string;
  /** When it paused (Date.now()). */
  at: number;
}

/** Requests about a pause wait until it is this old: sent at the moment of the pause,
 * js-debug fails them ("custom request failed") and the program runs on. */
const PAUSE_SETTLE_MS = 250;

async function settled(p: Paused): Promise<void> {
  const wait = PAUSE_SETTLE_MS - (Date.now() - p.at);
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
}

/** How long stopDebugging waits for the sessions to end before stopping each again. */
const STOP_RETRY_MS = 1500;

export class Debug implements vscode.Disposable {
  private readonly paused = new Map<string, Paused>();
  /** Sessions running now (a launch often has a parent and a child session). */
  private readonly running = new Map<string, vscode.DebugSession>();
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly changed: () => void) {
    const already = vscode.debug.activeDebugSession;
    if (already) this.running.set(already.id, already);
    this.disposables.push(
      vscode.debug.registerDebugAdapterTrackerFactory('*', {
        createDebugAdapterTracker: (session) => ({
          onDidSendMessage: (m: { type?: string; event?: string; body?: { threadId?: number; reason?: string } }) => {
            if (m.type !== 'event') return;
            if (m.event === 'stopped') {
              this.paused.set(session.id, { session, threadId: m.body?.threadId, reason: m.body?.reason, at: Date.now() });
              this.changed();
            } else if (m.event === 'continued' || m.event === 'terminated' || m.event === 'exited') {
              this.paused.delete(session.id);
              this.changed();
            }
          },
          onExit: () => {
            this.paused.delete(session.id);
          },
        }),
      }),
      vscode.debug.onDidStartDebugSession((s) => {
        this.running.set(s.id, s);
        this.changed();
      }),
      vscode.debug.onDidTerminateDebugSession((s) => {
        this.paused.delete(s.id);
        this.running.delete(s.id);
        this.changed();
      }),
      vscode.debug.onDidChangeBreakpoints(() => this.changed()),
    );
  }

  breakpoints(): object[] {
    return vscode.debug.breakpoints
      .filter((b): b is vscode.SourceBreakpoint => b instanceof vscode.SourceBreakpoint)
      .map((b) => ({
        file: b.location.uri.fsPath,
        line: b.location.range.start.line + 1,
        enabled: b.enabled,
        condition: b.condition,
        hitCondition: b.hitCondition,
        logMessage: b.logMessage,
      }));
  }

  /** The session the person sees as active, if it still runs; else any that runs.
   * (`vscode.debug.activeDebugSession` can keep naming a session that has ended.) */
  private active(): vscode.DebugSession | undefined {
    const a = vscode.debug.activeDebugSession;
    return a && this.running.has(a.id) ? a : [...this.running.values()][0];
  }

  /** The paused session: the active one if it is paused, else any (a child of it). */
  private pausedSession(): Paused | undefined {
    const active = this.active();
    return (active && this.paused.get(active.id)) ?? [...this.paused.values()][0];
  }

  /** What `extension/debugSessionChanged` and `getDebugState` share. */
  summary(): { hasActiveSession: boolean; sessionId?: string; sessionName?: string; isPaused: boolean; breakpoints: object[] } {
    const paused = this.pausedSession();
    const s = paused?.session ?? this.active();
    return {
      hasActiveSession: s !== undefined,
      sessionId: s?.id,
      sessionName: s?.name,
      isPaused: paused !== undefined,
      breakpoints: this.breakpoints(),
    };
  }

  register(c: Connection): void {
    c.handle('getDebugState', async () => {
      const state: Record<string, unknown> = this.summary();
      const paused = this.pausedSession();
      if (paused) {
        await settled(paused);
        const s = paused.session;
        const threadId = paused.threadId ?? (await ask(s, 'threads')).threads?.[0]?.id;
        const stack = await ask(s, 'stackTrace', { threadId, startFrame: 0, levels: 20 });
        const frames = (stack.stackFrames ?? []) as Array<{ id: number; name: string; line: number; column: number; source?: { path?: string } }>;
        state.pauseReason = paused.reason;
        state.callStack = frames.map((f) => ({ id: f.id, name: f.name, file: f.source?.path, line: f.line, column: f.column }));
        if (frames[0]) {
          const scopes = await ask(s, 'scopes', { frameId: frames[0].id });
          state.scopes = ((scopes.scopes ?? []) as Array<{ name: string; variablesReference: number; expensive?: boolean }>).map((sc) => ({
            name: sc.name,
            variablesReference: sc.variablesReference,
            expensive: sc.expensive === true,
          }));
        }
      }
      return state;
    });

    c.handle('evaluateInDebugger', async (p: Params) => {
      const paused = this.pausedSession();
      const s = paused?.session ?? this.active();
      if (!s) throw new Error('no debug session is active; start one with startDebugging');
      let frameId = p.frameId;
      if (paused) await settled(paused);
      if (frameId === undefined && paused) {
        const stack = await ask(s, 'stackTrace', { threadId: paused.threadId, startFrame: 0, levels: 1 });
        frameId = stack.stackFrames?.[0]?.id;
      }
      const answer = await ask(s, 'evaluate', { expression: String(need(p, 'expression')), frameId, context: p.context ?? 'repl' });
      return { result: answer.result, type: answer.type, variablesReference: answer.variablesReference };
    });

    c.handle('setDebugBreakpoints', (p: Params) => {
      const uri = uriOf(need(p, 'file'));
      const old = vscode.debug.breakpoints.filter((b) => b instanceof vscode.SourceBreakpoint && b.location.uri.toString() === uri.toString());
      vscode.debug.removeBreakpoints(old);
      const wanted = (p.breakpoints ?? []) as Array<{ line: number; condition?: string; hitCondition?: string; logMessage?: string }>;
      const added = wanted.map(
        (b) => new vscode.SourceBreakpoint(new vscode.Location(uri, position(b.line, 1)), true, b.condition, b.hitCondition, b.logMessage),
      );
      vscode.debug.addBreakpoints(added);
      return { set: added.length, file: uri.fsPath };
    });

    c.handle('startDebugging', async (p: Params) => {
      const folder = vscode.workspace.workspaceFolders?.[0];
      const configs = vscode.workspace.getConfiguration('launch', folder?.uri).get<Array<{ name: string }>>('configurations') ?? [];
      const name = p.configName ? String(p.configName) : configs[0]?.name;
      if (!name) throw new Error('no launch configuration: add one to .vscode/launch.json (or name one with configName)');
      if (!configs.some((cfg) => cfg.name === name)) {
        throw new Error(`no launch configuration named "${name}" (have: ${configs.map((cfg) => cfg.name).join(', ') || 'none'})`);
      }
      return { started: await vscode.debug.startDebugging(folder, name), configName: name };
    });

    c.handle('stopDebugging', async () => {
      const had = this.running.size > 0;
      await vscode.debug.stopDebugging();
      // js-debug sometimes keeps the parent of a stopped child session alive: stop
      // each session still running, by name, once more.
      const deadline = Date.now() + STOP_RETRY_MS;
      while (this.running.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      for (const session of [...this.running.values()]) {
        await vscode.debug.stopDebugging(session);
      }
      // Still there: ask each adapter itself to disconnect and end its debuggee.
      const again = Date.now() + STOP_RETRY_MS;
      while (this.running.size > 0 && Date.now() < again) await new Promise((r) => setTimeout(r, 100));
      for (const session of [...this.running.values()]) {
        try {
          await session.customRequest('disconnect', { terminateDebuggee: true });
        } catch {
          // Gone meanwhile.
        }
      }
      return {
        stopped: had,
        // Sessions that did not end (an adapter that ignores being stopped).
        stillRunning: [...this.running.values()].map((r) => ({ id: r.id, name: r.name, type: r.type })),
      };
    });
  }

  dispose(): void {
    this.disposables.forEach((d) => d.dispose());
  }
}
