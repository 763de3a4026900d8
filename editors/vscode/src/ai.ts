// AI comments: `// AI: …`, `# AI! …` (fix), `-- AI? …` (question) in any comment syntax,
// found in open documents and pushed to the bridge.
import * as vscode from 'vscode';

export interface AiComment {
  file: string;
  line: number;
  comment: string;
  syntax: string;
  fullLine: string;
  severity: string;
}

const LEADERS = ['//', '#', '--', ';', '/*', '<!--', '%', '"'];
const WORDS: Record<string, string> = { fix: 'fix', todo: 'todo', question: 'question', warn: 'warn', warning: 'warn', task: 'task' };

/** The AI comment on `line`, if there is one. */
export function parseAi(line: string): Omit<AiComment, 'file' | 'line' | 'fullLine'> | undefined {
  for (const lead of LEADERS) {
    const at = line.indexOf(lead);
    if (at < 0) continue;
    const m = /^\s*AI([:!?])(.*)$/.exec(line.slice(at + lead.length));
    if (!m) continue;
    const rest = m[2].trim().replace(/\s*\*\/\s*$/, '').replace(/\s*-->\s*$/, '');
    const severity = m[1] === '!' ? 'fix' : m[1] === '?' ? 'question' : WORDS[(/^[A-Za-z]+/.exec(rest)?.[0] ?? '').toLowerCase()] ?? 'task';
    return { comment: rest, syntax: lead, severity };
  }
  return undefined;
}

export function aiCommentsOf(doc: vscode.TextDocument): AiComment[] {
  if (doc.uri.scheme !== 'file') return [];
  const out: AiComment[] = [];
  for (let i = 0; i < doc.lineCount; i++) {
    const text = doc.lineAt(i).text;
    if (!text.includes('AI')) continue;
    const c = parseAi(text);
    if (c) out.push({ ...c, file: doc.uri.fsPath, line: i + 1, fullLine: text });
  }
  return out;
}

export function allAiComments(): AiComment[] {
  return vscode.workspace.textDocuments.flatMap(aiCommentsOf);
}
