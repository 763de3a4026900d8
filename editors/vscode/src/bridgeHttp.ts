// The bridge's HTTP endpoints the extension uses: `/status` (the agents, for choosing who
// gets an @-mention; the file claims held when it connects) and `/ui/login-code` (a
// one-time link to the bridge's page).
import * as http from 'http';

import { Lock } from './discovery';

function request(lock: Lock, method: 'GET' | 'POST', path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port: lock.port,
        method,
        path,
        headers: { Authorization: `Bearer ${lock.authToken}`, 'Content-Length': 0 },
        timeout: 5000,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('the bridge did not answer in 5 s')));
    req.on('error', reject);
    req.end();
  });
}

async function json(lock: Lock, method: 'GET' | 'POST', path: string): Promise<Record<string, unknown>> {
  const { status, body } = await request(lock, method, path);
  let parsed: Record<string, unknown> = {};
  try {
    parsed = JSON.parse(body);
  } catch {
    // said below
  }
  if (status !== 200) throw new Error(`the bridge answered HTTP ${status}: ${String(parsed.error ?? body)}`);
  return parsed;
}

export interface Session {
  id: string;
  client?: string;
  connected: boolean;
  initialized: boolean;
}

/** The agents' sessions. */
export async function sessions(lock: Lock): Promise<Session[]> {
  const status = await json(lock, 'GET', '/status');
  return (status.sessions as Session[] | undefined) ?? [];
}

/** Whether an editor (this window or another) is connected to the bridge. */
export async function editorConnected(lock: Lock): Promise<boolean> {
  const status = await json(lock, 'GET', '/status');
  return (status.extension as { connected?: boolean } | undefined)?.connected === true;
}

/** A file claim, as `/status` and `bridge/claimsChanged` describe it. */
export interface Claim {
  id: number;
  /** `agent claude-code 1a2b3c4d`, or `the person`. */
  holder: string;
  /** Workspace-relative paths or globs. */
  patterns: string[];
  reason: string;
  expiresInSeconds: number;
}

/** The file claims held now. */
export async function claims(lock: Lock): Promise<Claim[]> {
  const status = await json(lock, 'GET', '/status');
  const held = (status.claims as { held?: Claim[] } | undefined)?.held;
  return held ?? [];
}

/** A one-time sign-in link to the bridge's page. */
export async function pageLink(lock: Lock): Promise<string> {
  const answer = await json(lock, 'POST', '/ui/login-code');
  return String(answer.url);
}
