// Finding the bridge that serves the workspace: its lock file in <config dir>/ide/.
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

/** A bridge's lock file (`<port>.lock`). */
export interface Lock {
  port: number;
  pid: number;
  workspaceFolders: string[];
  authToken: string;
  ideName?: string;
  isBridge?: boolean;
}

/** `<dir>/ide`, where lock files are: the setting, else $CLAUDE_CONFIG_DIR, else ~/.claude. */
export function ideDir(configDirSetting: string): string {
  const base = configDirSetting.trim() || process.env.CLAUDE_CONFIG_DIR || path.join(os.homedir(), '.claude');
  return path.join(base, 'ide');
}

/** True when a process with this pid exists (ours or not). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Every readable lock file of a live bridge in `dir`. */
export function liveBridges(dir: string): Lock[] {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return [];
  }
  const locks: Lock[] = [];
  for (const name of names) {
    const port = Number(name.replace(/\.lock$/, ''));
    if (!name.endsWith('.lock') || !Number.isInteger(port) || port <= 0) continue;
    try {
      const raw = JSON.parse(fs.readFileSync(path.join(dir, name), 'utf8')) as Partial<Lock>;
      if (raw.isBridge !== true || typeof raw.pid !== 'number' || typeof raw.authToken !== 'string') continue;
      if (!Array.isArray(raw.workspaceFolders) || !pidAlive(raw.pid)) continue;
      locks.push({ ...(raw as Lock), port });
    } catch {
      // Being written, or not ours: the next look finds it.
    }
  }
  return locks;
}

function contains(root: string, dir: string): boolean {
  const rel = path.relative(root, dir);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/** The bridge whose workspace contains one of `folders`, the deepest such workspace first. */
export function findBridge(dir: string, folders: readonly string[]): Lock | undefined {
  let best: { lock: Lock; depth: number } | undefined;
  for (const lock of liveBridges(dir)) {
    for (const root of lock.workspaceFolders) {
      if (!folders.some((f) => contains(root, f))) continue;
      const depth = path.resolve(root).split(path.sep).length;
      if (!best || depth > best.depth) best = { lock, depth };
    }
  }
  return best?.lock;
}
