// The extension's log: an output channel ("ide-bridge") with timestamps.
import * as vscode from 'vscode';

export class Log implements vscode.Disposable {
  readonly channel: vscode.OutputChannel;

  constructor() {
    this.channel = vscode.window.createOutputChannel('ide-bridge');
  }

  private write(level: string, message: string): void {
    this.channel.appendLine(`${new Date().toISOString()} ${level} ${message}`);
  }

  info(message: string): void {
    this.write('INFO ', message);
  }

  warn(message: string): void {
    this.write('WARN ', message);
  }

  error(message: string): void {
    this.write('ERROR', message);
  }

  dispose(): void {
    this.channel.dispose();
  }
}

/** The message of anything thrown. */
export function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
