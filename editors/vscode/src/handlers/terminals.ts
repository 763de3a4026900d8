// Terminals: VS Code's integrated terminals. Output is known through shell integration
// (VS Code's own, on by default for bash, zsh, fish and PowerShell): every command run in
// a terminal with it is read as it prints and kept (the last lines per terminal), and
// `executeInTerminal` runs a command and answers its exit code and output.
import * as vscode from 'vscode';

import { Connection, Params } from '../connection';
import { need } from '../util';

/** Lines kept per terminal. */
const KEEP_LINES = 2000;
/** Output returned by one `executeInTerminal`, at most. */
const MAX_OUTPUT = 256 * 1024;
/** Longest regex `waitForTerminalOutput` accepts, and the part of a line it is tried
 * on: it runs on the extension host's thread. */
const MAX_PATTERN = 1000;
const MAX_LINE = 4096;
/** How long a new terminal gets to report its shell integration. */
const INTEGRATION_WAIT_MS = 5000;
/** The wait without `timeoutMs`: the bridge then waits its editor request timeout (10 s
 * by default), so answer before it. With one, the bridge waits that long plus 2 s. */
const DEFAULT_WAIT_MS = 9000;

/** ANSI / OSC escape sequences. */
// eslint-disable-next-line no-control-regex
const ESCAPES = /\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-Z\\-_]/g;

export function stripEscapes(text: string): string {
  return text.replace(ESCAPES, '').replace(/\r(?!\n)/g, '');
}

export class Terminals implements vscode.Disposable {
  private readonly output = new WeakMap<vscode.Terminal, string[]>();
  /** Each command's whole output (capped), read once as it runs. */
  private readonly executions = new WeakMap<vscode.TerminalShellExecution, Promise<string>>();
  private readonly waiters = new Set<(terminal: vscode.Terminal, line: string) => void>();
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly maxWaitMs: () => number) {
    this.disposables.push(
      // Commands the user runs: their output from the moment VS Code reports them (a
      // fast command may have printed everything by then).
      vscode.window.onDidStartTerminalShellExecution((e) => this.track(e.terminal, e.execution)),
    );
  }

  /** The wait an agent asked for (its `timeoutMs`), at most `maxTerminalWaitMs`. */
  private waitMs(p: Params): number {
    return Math.min(Number(p.timeoutMs ?? DEFAULT_WAIT_MS), this.maxWaitMs());
  }

  private lines(t: vscode.Terminal): string[] {
    let l = this.output.get(t);
    if (!l) {
      l = [];
      this.output.set(t, l);
    }
    return l;
  }

  /** Reads a command's output into its terminal's lines, waking those who wait for it. */
  private async capture(t: vscode.Terminal, execution: vscode.TerminalShellExecution): Promise<string> {
    const lines = this.lines(t);
    let pending = '';
    let all = '';
    const push = (line: string) => {
      lines.push(line);
      if (lines.length > KEEP_LINES) lines.splice(0, lines.length - KEEP_LINES);
      for (const w of this.waiters) w(t, line);
    };
    try {
      for await (const chunk of execution.read()) {
        const text = stripEscapes(chunk);
        if (all.length < MAX_OUTPUT) all += text;
        pending += text;
        const parts = pending.split(/\r?\n/);
        pending = parts.pop() ?? '';
        parts.forEach(push);
      }
    } catch {
      // the terminal went away
    }
    if (pending) push(pending);
    return all;
  }

  /** Reads `execution`'s output once, however many times it is announced. */
  private track(t: vscode.Terminal, execution: vscode.TerminalShellExecution): Promise<string> {
    let output = this.executions.get(execution);
    if (!output) {
      output = this.capture(t, execution);
      this.executions.set(execution, output);
    }
    return output;
  }

  /** Runs `command` through shell integration, reading its output from the start. */
  private run(t: vscode.Terminal, shell: vscode.TerminalShellIntegration, command: string): { execution: vscode.TerminalShellExecution; output: Promise<string> } {
    const execution = shell.executeCommand(command);
    return { execution, output: this.track(t, execution) };
  }

  /** The terminal named by `name` or `index`, else the active one, else the first. */
  pick(p: Params): vscode.Terminal {
    const all = vscode.window.terminals;
    let t: vscode.Terminal | undefined;
    if (p.name !== undefined) t = all.find((x) => x.name === p.name);
    else if (p.index !== undefined) t = all[Number(p.index)];
    else t = vscode.window.activeTerminal ?? all[0];
    if (!t) {
      throw new Error(p.name !== undefined || p.index !== undefined ? `no terminal ${p.name ?? '#' + p.index}` : 'no terminal is open');
    }
    return t;
  }

  private async integration(t: vscode.Terminal, waitMs: number): Promise<vscode.TerminalShellIntegration> {
    if (t.shellIntegration) return t.shellIntegration;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        sub.dispose();
        reject(new Error(`terminal "${t.name}" has no shell integration (VS Code's terminal.integrated.shellIntegration.enabled, and a bash, zsh, fish or PowerShell shell), so its commands' output and exit codes cannot be read`));
      }, Math.min(INTEGRATION_WAIT_MS, waitMs));
      const sub = vscode.window.onDidChangeTerminalShellIntegration((e) => {
        if (e.terminal === t) {
          clearTimeout(timer);
          sub.dispose();
          resolve(e.shellIntegration);
        }
      });
    });
  }

  register(c: Connection): void {
    c.handle('listTerminals', () => {
      const active = vscode.window.activeTerminal;
      const terminals = vscode.window.terminals.map((t, index) => ({
        name: t.name,
        index,
        isActive: t === active,
        hasOutputCapture: t.shellIntegration !== undefined,
      }));
      return { terminals, count: terminals.length };
    });

    c.handle('getTerminalOutput', (p: Params) => {
      const t = this.pick(p);
      const n = Math.max(1, Math.min(KEEP_LINES, Number(p.lines ?? 100)));
      const lines = this.lines(t).slice(-n);
      return { available: t.shellIntegration !== undefined || lines.length > 0, terminalName: t.name, lines, lineCount: lines.length };
    });

    c.handle('createTerminal', (p: Params) => {
      const t = vscode.window.createTerminal({
        name: p.name ? String(p.name) : undefined,
        cwd: p.cwd ? String(p.cwd) : undefined,
        env: p.env && typeof p.env === 'object' ? p.env : undefined,
      });
      if (p.show !== false) t.show(true);
      return { success: true, name: t.name, index: vscode.window.terminals.indexOf(t) };
    });

    c.handle('disposeTerminal', (p: Params) => {
      const t = this.pick(p);
      t.dispose();
      return { success: true, terminalName: t.name };
    });

    c.handle('sendTerminalCommand', (p: Params) => {
      const t = this.pick(p);
      const text = String(need(p, 'text'));
      // A command line goes through shell integration when the terminal has it, so its
      // output is read from its first byte; text without a newline is only typed.
      if (p.addNewline !== false && t.shellIntegration) this.run(t, t.shellIntegration, text);
      else t.sendText(text, p.addNewline !== false);
      return { success: true, terminalName: t.name };
    });

    c.handle('executeInTerminal', async (p: Params) => {
      const command = String(need(p, 'command'));
      const t = this.pick(p);
      if (p.show) t.show(true);
      // One budget for waiting on the shell and on the command.
      const deadline = Date.now() + this.waitMs(p);
      const shell = await this.integration(t, deadline - Date.now());
      const wait = Math.max(0, deadline - Date.now());
      const { execution, output } = this.run(t, shell, command);
      const ended = new Promise<number | undefined>((resolve) => {
        const sub = vscode.window.onDidEndTerminalShellExecution((e) => {
          if (e.execution === execution) {
            sub.dispose();
            resolve(e.exitCode);
          }
        });
      });
      const timedOut = Symbol('timeout');
      const exit = await Promise.race([ended, new Promise<typeof timedOut>((r) => setTimeout(() => r(timedOut), wait))]);
      if (exit === timedOut) {
        return { success: false, timedOut: true, terminalName: t.name, output: this.lines(t).slice(-50).join('\n') };
      }
      const text = await Promise.race([output, new Promise<string>((r) => setTimeout(() => r(''), 500))]);
      return {
        success: exit === 0,
        exitCode: exit,
        output: text.slice(0, MAX_OUTPUT).replace(/\n$/, ''),
        truncated: text.length > MAX_OUTPUT,
        terminalName: t.name,
      };
    });

    c.handle('waitForTerminalOutput', async (p: Params) => {
      const source = String(need(p, 'pattern'));
      if (source.length > MAX_PATTERN) throw new Error(`pattern longer than ${MAX_PATTERN} characters`);
      const pattern = new RegExp(source);
      const t = this.pick(p);
      const started = Date.now();
      const seen = this.lines(t).find((l) => pattern.test(l.slice(0, MAX_LINE)));
      if (seen !== undefined) return { matched: true, matchedLine: seen, elapsed: 0 };
      const wait = this.waitMs(p);
      return new Promise((resolve) => {
        const done = (result: object) => {
          clearTimeout(timer);
          this.waiters.delete(waiter);
          resolve(result);
        };
        const waiter = (term: vscode.Terminal, line: string) => {
          if (term === t && pattern.test(line.slice(0, MAX_LINE))) done({ matched: true, matchedLine: line, elapsed: Date.now() - started });
        };
        const timer = setTimeout(() => done({ matched: false, timedOut: true, elapsed: Date.now() - started }), wait);
        this.waiters.add(waiter);
      });
    });
  }

  dispose(): void {
    this.disposables.forEach((d) => d.dispose());
  }
}
