import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliPath, type RunResult } from './support/app.ts';

/** Runs `fw …` with `stdin` piped in (runFw does not pipe stdin). */
function runFwWithInput(args: string[], stdin: string, cwd: string): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cliPath, ...args], { cwd, env: process.env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(stdin);
  });
}

const apiKey = 'sk-proj-Xq7vR2mN9pL4kT8wZ1yB6cD3fG5hJ0sA';
const preToolUse = {
  session_id: '7c1e0f3a-2b4d-4e5f-9a8b-1c2d3e4f5a6b',
  transcript_path: '/home/ana/.claude/projects/-home-ana-src-shop/7c1e0f3a.jsonl',
  cwd: '/home/ana/src/shop',
  permission_mode: 'default',
  hook_event_name: 'PreToolUse',
  tool_name: 'Bash',
  tool_input: { command: `OPENAI_API_KEY=${apiKey} npm run wombat-import`, description: 'Import the wombats' },
  tool_use_id: 'toolu_01HkQ2mR8vK3pL4tN7wZ1yB6',
};
const codexNotify = {
  type: 'agent-turn-complete',
  'thread-id': '0199a213-81c0-7800-8aa1-bbab2a035a53',
  'turn-id': '3',
  cwd: '/home/ana/src/shop',
  'input-messages': ['summarise the wombat import'],
  'last-assistant-message': 'Imported 12 wombats.',
};

describe('fw agent events', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'fw-agent-events-e2e-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('ingests a hook payload from stdin and a Codex notify payload from its argument, then lists them', async () => {
    const ingest = await runFwWithInput(['agent', 'events', 'ingest', '--json'], JSON.stringify(preToolUse), dir);
    expect(ingest.code, ingest.stderr).toBe(0);
    const report = JSON.parse(ingest.stdout);
    expect(report).toMatchObject({ ok: true, ingested: 1, rejected: [], file: path.join(dir, '.fw', 'agent-events.jsonl') });
    expect(report.events[0]).toMatchObject({ source: 'claude-code', kind: 'tool.started', tool: { name: 'Bash', category: 'shell' }, cwd: 'shop' });

    // Codex notify appends the payload as the last argument.
    const notify = await runFwWithInput(['agent', 'events', 'ingest', '--source', 'codex', '--root', dir, JSON.stringify(codexNotify)], '', tmpdir());
    expect(notify.code, notify.stderr).toBe(0);
    expect(notify.stderr).toContain('stored 1 event(s)');

    const list = await runFwWithInput(['agent', 'events', 'list', '--json'], '', dir);
    expect(list.code, list.stderr).toBe(0);
    const listed = JSON.parse(list.stdout);
    expect(listed).toMatchObject({ ok: true, total: 2 });
    expect(listed.events.map((e: { kind: string }) => e.kind)).toEqual(['agent.stopped', 'tool.started']);

    const filtered = await runFwWithInput(['agent', 'events', 'list', '--source', 'claude-code', '--json'], '', dir);
    expect(JSON.parse(filtered.stdout).events).toHaveLength(1);

    const stored = await readFile(path.join(dir, '.fw', 'agent-events.jsonl'), 'utf8');
    for (const raw of [apiKey, 'wombat', '/home/ana', preToolUse.session_id]) expect(stored, raw).not.toContain(raw);
    expect(ingest.stdout + list.stdout).not.toContain(apiKey);
  });

  it('exits 1 with a JSON failure when nothing valid was ingested', async () => {
    const empty = await runFwWithInput(['agent', 'events', 'ingest', '--json'], '', dir);
    expect(empty.code).toBe(1);
    expect(JSON.parse(empty.stdout)).toMatchObject({ ok: false, kind: 'no_agent_events' });

    const bad = await runFwWithInput(['agent', 'events', 'ingest', '--json'], `{"prompt": "${apiKey}"\n[1, 2]\n`, dir);
    expect(bad.code).toBe(1);
    const failure = JSON.parse(bad.stdout);
    expect(failure).toMatchObject({ ok: false, kind: 'no_agent_events', diagnostics: [{ path: 'line 1', code: 'rejected_agent_event' }, { path: 'line 2', code: 'rejected_agent_event' }] });
    expect(bad.stdout).not.toContain(apiKey);

    const wrongSource = await runFwWithInput(['agent', 'events', 'ingest', '--source', 'cursor', '--json'], JSON.stringify(preToolUse), dir);
    expect(wrongSource.code).toBe(1);
    expect(JSON.parse(wrongSource.stdout)).toMatchObject({ ok: false, kind: 'invalid_option' });
  });
});
