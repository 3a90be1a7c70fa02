import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { agentEventsFile, ingestAgentEvents, listAgentEvents, looksSecret, normaliseAgentEvent, type AgentEvent } from './agent-events.ts';

const schemaFile = fileURLToPath(new URL('../../schemas/fw-agent-event.v1.schema.json', import.meta.url));
const validate = new Ajv2020({ allErrors: true, strict: true }).compile(JSON.parse(await readFile(schemaFile, 'utf8')));

function expectValid(event: unknown): void {
  const ok = validate(event);
  expect(ok ? [] : validate.errors).toEqual([]);
}

// Secrets and prompt words the fixtures carry; none may reach the store.
const secrets = {
  openai: 'sk-proj-Xq7vR2mN9pL4kT8wZ1yB6cD3fG5hJ0sA',
  password: 'correct-horse-battery-staple',
  github: 'ghp_R8xK2mQ9vL4tN7wZ1yB6cD3fG5hJ0sAa1b2',
  stripe: 'sk_live_51HxQmR8vK2pL4tN7wZ1yB6cD3f',
  awsKeyId: 'AKIAIOSFODNN7EXAMPLE',
  awsSecret: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
  slack: 'xoxb-2048-4096-Zq8RmT3vKx9LpW',
  mcpKey: 'a3f9c2e17b8d4056e1f2a3b4c5d6e7f8',
};
const promptWords = ['quokka', 'pelican', 'narwhal', 'migration against staging', 'rotate the Stripe key', 'Deployed the banner', 'psql', 'db.internal'];
const home = '/home/ana';

const claude = {
  sessionStart: {
    session_id: '7c1e0f3a-2b4d-4e5f-9a8b-1c2d3e4f5a6b',
    transcript_path: `${home}/.claude/projects/-home-ana-src-shop/7c1e0f3a-2b4d-4e5f-9a8b-1c2d3e4f5a6b.jsonl`,
    cwd: `${home}/src/shop`,
    hook_event_name: 'SessionStart',
    source: 'startup',
    model: 'claude-sonnet-4-5',
  },
  promptSubmit: {
    session_id: '7c1e0f3a-2b4d-4e5f-9a8b-1c2d3e4f5a6b',
    transcript_path: `${home}/.claude/projects/-home-ana-src-shop/7c1e0f3a-2b4d-4e5f-9a8b-1c2d3e4f5a6b.jsonl`,
    cwd: `${home}/src/shop`,
    permission_mode: 'default',
    hook_event_name: 'UserPromptSubmit',
    prompt: `Please rotate the Stripe key ${secrets.stripe} in the billing worker and ship the quokka-themed banner`,
  },
  preToolUse: {
    session_id: '7c1e0f3a-2b4d-4e5f-9a8b-1c2d3e4f5a6b',
    transcript_path: `${home}/.claude/projects/-home-ana-src-shop/7c1e0f3a-2b4d-4e5f-9a8b-1c2d3e4f5a6b.jsonl`,
    cwd: `${home}/src/shop`,
    permission_mode: 'default',
    hook_event_name: 'PreToolUse',
    tool_name: 'Bash',
    tool_input: {
      command: `export OPENAI_API_KEY=${secrets.openai} && PGPASSWORD='${secrets.password}' psql -h db.internal -U admin shop -f migrate.sql`,
      description: 'Run the migration against staging',
    },
    tool_use_id: 'toolu_01HkQ2mR8vK3pL4tN7wZ1yB6',
  },
  postToolUse: {
    session_id: '7c1e0f3a-2b4d-4e5f-9a8b-1c2d3e4f5a6b',
    transcript_path: `${home}/.claude/projects/-home-ana-src-shop/7c1e0f3a-2b4d-4e5f-9a8b-1c2d3e4f5a6b.jsonl`,
    cwd: `${home}/src/shop`,
    permission_mode: 'default',
    hook_event_name: 'PostToolUse',
    tool_name: 'Bash',
    tool_input: { command: 'gh auth token' },
    tool_response: { stdout: `${secrets.github}\n`, stderr: '', interrupted: false, isImage: false },
    tool_use_id: 'toolu_01JmS3nT9wL5qM8xA2zC7dE4',
  },
  mcpToolUse: {
    session_id: '7c1e0f3a-2b4d-4e5f-9a8b-1c2d3e4f5a6b',
    cwd: `${home}/src/shop`,
    hook_event_name: 'PreToolUse',
    tool_name: 'mcp__slack__post_message',
    tool_input: { channel: '#deploys', text: 'Deployed the banner', bot_token: secrets.slack, [secrets.mcpKey]: true },
    tool_use_id: 'toolu_01KpT4oU0xM6rN9yB3aD8eF5',
  },
  toolFailure: {
    session_id: '7c1e0f3a-2b4d-4e5f-9a8b-1c2d3e4f5a6b',
    cwd: `${home}/src/shop`,
    hook_event_name: 'PostToolUseFailure',
    tool_name: 'Read',
    tool_input: { file_path: `${home}/src/shop/.env` },
    error: `EACCES: permission denied, open '${home}/src/shop/.env'`,
    is_interrupt: false,
    tool_use_id: 'toolu_01LqU5pV1yN7sO0zC4bE9fG6',
  },
  notification: {
    session_id: '7c1e0f3a-2b4d-4e5f-9a8b-1c2d3e4f5a6b',
    transcript_path: `${home}/.claude/projects/x/7c1e0f3a.jsonl`,
    cwd: `${home}/src/shop`,
    hook_event_name: 'Notification',
    message: 'Claude needs your permission to use Bash',
    notification_type: 'permission_prompt',
  },
  stop: {
    session_id: '7c1e0f3a-2b4d-4e5f-9a8b-1c2d3e4f5a6b',
    transcript_path: `${home}/.claude/projects/-home-ana-src-shop/7c1e0f3a-2b4d-4e5f-9a8b-1c2d3e4f5a6b.jsonl`,
    cwd: `${home}/src/shop`,
    permission_mode: 'default',
    hook_event_name: 'Stop',
    stop_hook_active: false,
  },
};

const codex = {
  notify: {
    type: 'agent-turn-complete',
    'thread-id': '0199a213-81c0-7800-8aa1-bbab2a035a53',
    'turn-id': '12',
    cwd: `${home}/src/shop`,
    'input-messages': [`deploy with AWS key ${secrets.awsKeyId} and secret ${secrets.awsSecret}`, 'then summarise the pelican report'],
    'last-assistant-message': 'Deployed. The pelican report says traffic doubled.',
  },
  preToolUse: {
    session_id: '0199a213-81c0-7800-8aa1-bbab2a035a53',
    turn_id: '019d036d-c7fa-72d2-b6fd-78878bfe34e4',
    transcript_path: null,
    cwd: `${home}/src/shop`,
    hook_event_name: 'PreToolUse',
    model: 'gpt-5-codex',
    permission_mode: 'default',
    tool_name: 'apply_patch',
    tool_input: { input: '*** Begin Patch\n*** Update File: src/narwhal.ts\n*** End Patch' },
    tool_use_id: 'call_8f2kQ',
  },
};

const unknownPayload = { event: 'did-something', api_token: secrets.slack, payload: { text: 'confidential narwhal plan' } };

describe('normaliseAgentEvent', () => {
  const now = new Date('2026-05-20T09:14:03.512Z');

  it('normalises Claude Code hook payloads into kinds, tools and summaries', () => {
    const start = normaliseAgentEvent(claude.sessionStart, undefined, { now });
    expect(start).toMatchObject({
      schema: 'fw.agent-event.v1',
      source: 'claude-code',
      sourceEvent: 'SessionStart',
      kind: 'session.start',
      occurredAt: now.toISOString(),
      ingestedAt: now.toISOString(),
      session: { id: expect.stringMatching(/^[0-9a-f]{16}$/), turnId: null },
      tool: null,
      cwd: 'shop',
      summary: { trigger: 'startup', model: 'claude-sonnet-4-5' },
    });
    expect(start.redactions).toEqual(expect.arrayContaining([{ field: 'transcript_path', as: 'dropped' }, { field: 'session_id', as: 'hash' }, { field: 'cwd', as: 'basename' }]));

    const prompt = normaliseAgentEvent(claude.promptSubmit, undefined, { now });
    expect(prompt).toMatchObject({ kind: 'prompt.submitted', summary: { promptChars: claude.promptSubmit.prompt.length, permissionMode: 'default', secretsDetected: 1 } });
    expect(prompt.redactions).toContainEqual({ field: 'prompt', as: 'length' });

    const pre = normaliseAgentEvent(claude.preToolUse, undefined, { now });
    expect(pre).toMatchObject({
      kind: 'tool.started',
      tool: { name: 'Bash', category: 'shell' },
      summary: { inputKeys: ['command', 'description'], inputChars: JSON.stringify(claude.preToolUse.tool_input).length, secretsDetected: 1 },
    });
    expect(pre.redactions).toContainEqual({ field: 'tool_input', as: 'keys' });

    const post = normaliseAgentEvent(claude.postToolUse, undefined, { now });
    expect(post).toMatchObject({
      kind: 'tool.finished',
      tool: { name: 'Bash', category: 'shell' },
      summary: { inputKeys: ['command'], outputKeys: ['stdout', 'stderr', 'interrupted', 'isImage'], interrupted: false, secretsDetected: 1 },
    });

    const mcp = normaliseAgentEvent(claude.mcpToolUse, undefined, { now });
    expect(mcp.tool).toEqual({ name: 'mcp__slack__post_message', category: 'mcp' });
    // A secret-named key and a key that is itself a token are both replaced.
    expect(mcp.summary.inputKeys).toEqual(['channel', 'text', '[redacted-key]']);
    expect(mcp.summary.secretsDetected).toBe(2);

    const failure = normaliseAgentEvent(claude.toolFailure, undefined, { now });
    expect(failure).toMatchObject({ kind: 'tool.failed', tool: { name: 'Read', category: 'read' }, summary: { success: false, interrupted: false, errorChars: claude.toolFailure.error.length } });

    expect(normaliseAgentEvent(claude.notification, undefined, { now })).toMatchObject({ kind: 'notification', summary: { notificationType: 'permission_prompt', messageChars: 40 } });
    expect(normaliseAgentEvent(claude.stop, undefined, { now })).toMatchObject({ kind: 'agent.stopped', sourceEvent: 'Stop', summary: { stopHookActive: false } });
    expect(normaliseAgentEvent({ ...claude.stop, hook_event_name: 'SubagentStop', agent_id: 'a1', agent_type: 'Explore' }, undefined, { now })).toMatchObject({
      kind: 'agent.stopped',
      summary: { subagent: true, agentType: 'Explore' },
    });
    expect(normaliseAgentEvent({ ...claude.stop, hook_event_name: 'PreCompact', trigger: 'auto', custom_instructions: '' }, undefined, { now })).toMatchObject({
      kind: 'other',
      sourceEvent: 'PreCompact',
      summary: { trigger: 'auto' },
    });
  });

  it('normalises the Codex notify payload and Codex hook payloads', () => {
    const turn = normaliseAgentEvent(codex.notify, undefined, { now });
    expect(turn).toMatchObject({
      source: 'codex',
      sourceEvent: 'agent-turn-complete',
      kind: 'agent.stopped',
      session: { id: expect.stringMatching(/^[0-9a-f]{16}$/), turnId: expect.stringMatching(/^[0-9a-f]{16}$/) },
      cwd: 'shop',
      summary: { messageCount: 2, assistantChars: codex.notify['last-assistant-message'].length, secretsDetected: 1 },
    });
    expect(turn.summary.promptChars).toBe(codex.notify['input-messages'].join('').length);

    const hook = normaliseAgentEvent(codex.preToolUse, undefined, { now });
    expect(hook).toMatchObject({ source: 'codex', kind: 'tool.started', tool: { name: 'apply_patch', category: 'edit' }, summary: { model: 'gpt-5-codex', inputKeys: ['input'] } });
    expect(hook.session?.turnId).toMatch(/^[0-9a-f]{16}$/);
    // Both agents' events of one session hash the same way.
    expect(hook.session?.id).toBe(turn.session?.id);
  });

  it('detects the source from the payload shape, and honours --source', () => {
    const { transcript_path: _, ...bare } = claude.stop;
    expect(normaliseAgentEvent(bare).source).toBe('claude-code');
    expect(normaliseAgentEvent({ ...bare, turn_id: 't1' }).source).toBe('codex');
    expect(normaliseAgentEvent({ ...bare, transcript_path: `${home}/.codex/sessions/2026/05/20/rollout.jsonl` }).source).toBe('codex');
    expect(normaliseAgentEvent(bare, 'codex')).toMatchObject({ source: 'codex', kind: 'agent.stopped' });
    // The notify shape is Codex's; labelled as another agent it is summarised as an unknown shape.
    expect(normaliseAgentEvent(codex.notify, 'claude-code')).toMatchObject({ source: 'claude-code', kind: 'other', sourceEvent: null, session: null });
    expect(() => normaliseAgentEvent(bare, 'cursor')).toThrow(/Unknown agent source "cursor"/);
    expect(() => normaliseAgentEvent(['PreToolUse'])).toThrow(/must be a JSON object, not an array/);
  });

  it('keeps only the key names of an unknown payload', () => {
    const event = normaliseAgentEvent(unknownPayload, undefined, { now });
    expect(event).toMatchObject({ source: 'unknown', kind: 'other', sourceEvent: null, session: null, tool: null, cwd: null });
    expect(event.summary).toEqual({ keys: ['event', '[redacted-key]', 'payload'], secretsDetected: 1 });
    expect(event.redactions).toEqual([
      { field: 'event', as: 'dropped' },
      { field: '[redacted-key]', as: 'dropped' },
      { field: 'payload', as: 'dropped' },
    ]);
  });

  it('takes occurredAt from the payload when it has a timestamp, and derives a stable id from it', () => {
    const stamped = { ...codex.notify, timestamp: 1_779_268_443 };
    const first = normaliseAgentEvent(stamped);
    expect(first.occurredAt).toBe(new Date(1_779_268_443_000).toISOString());
    expect(normaliseAgentEvent(stamped).id).toBe(first.id);
    expect(first.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    // Without anything identifying the event, two deliveries are two events.
    expect(normaliseAgentEvent(claude.stop).id).not.toBe(normaliseAgentEvent(claude.stop).id);
  });

  it('drops identifiers that look secret or are not plain names', () => {
    const event = normaliseAgentEvent({
      hook_event_name: 'PreToolUse',
      session_id: 's',
      cwd: `/tmp/${secrets.github}`,
      tool_name: `run ${secrets.openai}`,
      model: 'gpt 5; rm -rf /',
    });
    expect(event.tool).toEqual({ name: '[redacted]', category: 'other' });
    expect(event.cwd).toBe('[redacted]');
    expect(event.summary.model).toBeUndefined();
    expect(event.redactions).toEqual(expect.arrayContaining([{ field: 'tool_name', as: 'secret' }, { field: 'cwd', as: 'secret' }, { field: 'model', as: 'dropped' }]));
    expectValid(event);
  });
});

describe('looksSecret', () => {
  it('flags known token formats, assignments and high-entropy tokens', () => {
    for (const text of [...Object.values(secrets).filter((s) => s !== secrets.password), 'password=hunter22', 'Authorization: Bearer abcdefghijklmnop123', 'postgres://admin:hunter22@db/shop',
      'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U', '-----BEGIN OPENSSH PRIVATE KEY-----', 'Zk8Qm2vR7xT4pL9wN3yB6cD1fG5hJ0sAeU']) {
      expect(looksSecret(text), text).toBe(true);
    }
  });

  it('leaves ordinary names, paths and prose alone', () => {
    for (const text of ['PreToolUse', 'mcp__github__create_pull_request_review_comment', 'claude-sonnet-4-5', 'node_modules/@types/node/index.d.ts', 'max_tokens: 1000', 'Run the migration against staging', '7c1e0f3a-2b4d-4e5f-9a8b-1c2d3e4f5a6b']) {
      expect(looksSecret(text), text).toBe(false);
    }
  });
});

describe('ingestAgentEvents and listAgentEvents', () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'fw-agent-events-'));
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  it('stores JSON Lines redacted: no secret and no prompt text anywhere in the file', async () => {
    const lines = [
      JSON.stringify(claude.sessionStart),
      JSON.stringify(claude.promptSubmit),
      JSON.stringify(claude.preToolUse),
      `{"hook_event_name":"PostToolUse","tool_response":"${secrets.github}"`, // truncated: a bad line
      JSON.stringify(claude.postToolUse),
      '',
      JSON.stringify(claude.mcpToolUse),
      JSON.stringify(claude.toolFailure),
      JSON.stringify(claude.notification),
      JSON.stringify(claude.stop),
      JSON.stringify(codex.notify),
      JSON.stringify(codex.preToolUse),
      JSON.stringify(unknownPayload),
      '"just a string"',
    ];
    const result = await ingestAgentEvents(root, lines.join('\n'));
    expect(result.ingested).toBe(11);
    expect(result.rejected).toEqual([
      { line: 4, message: expect.stringMatching(/^Line 4 is not valid JSON/) },
      { line: 14, message: 'An agent event must be a JSON object, not a string.' },
    ]);
    expect(JSON.stringify(result.rejected)).not.toContain(secrets.github);

    const stored = await readFile(agentEventsFile(root), 'utf8');
    const events = stored.trim().split('\n').map((line) => JSON.parse(line) as AgentEvent);
    expect(events.map((e) => `${e.source} ${e.kind}`)).toEqual([
      'claude-code session.start',
      'claude-code prompt.submitted',
      'claude-code tool.started',
      'claude-code tool.finished',
      'claude-code tool.started',
      'claude-code tool.failed',
      'claude-code notification',
      'claude-code agent.stopped',
      'codex agent.stopped',
      'codex tool.started',
      'unknown other',
    ]);
    expect(events.map((e) => e.tool && `${e.tool.name}:${e.tool.category}`)).toEqual([
      null, null, 'Bash:shell', 'Bash:shell', 'mcp__slack__post_message:mcp', 'Read:read', null, null, null, 'apply_patch:edit', null,
    ]);
    for (const event of events) expectValid(event);

    for (const secret of Object.values(secrets)) expect(stored, secret).not.toContain(secret);
    for (const word of promptWords) expect(stored.toLowerCase(), word).not.toContain(word.toLowerCase());
    for (const raw of ['/home/ana', '.claude/projects', '7c1e0f3a-2b4d-4e5f-9a8b-1c2d3e4f5a6b', 'toolu_01', 'traffic doubled', 'permission denied', 'needs your permission', 'bot_token', 'api_token']) {
      expect(stored, raw).not.toContain(raw);
    }
  });

  it('accepts one pretty-printed JSON document', async () => {
    const result = await ingestAgentEvents(root, JSON.stringify(claude.preToolUse, null, 2), 'claude-code');
    expect(result).toMatchObject({ ingested: 1, rejected: [] });
    expect(result.events[0]).toMatchObject({ kind: 'tool.started', tool: { name: 'Bash' } });
  });

  it('rejects an unknown --source before reading anything', async () => {
    await expect(ingestAgentEvents(root, JSON.stringify(claude.stop), 'cursor')).rejects.toThrow(/Unknown agent source/);
    await expect(listAgentEvents(root, { kind: 'tool.exploded' })).rejects.toThrow(/Unknown agent event kind/);
    await expect(listAgentEvents(root, { limit: 0 })).rejects.toThrow(/positive integer/);
  });

  it('lists newest first, filters by source and kind, limits, and lists a re-delivered payload once', async () => {
    expect(await listAgentEvents(root)).toMatchObject({ total: 0, events: [], skipped: 0 });
    // Newest first is by occurredAt, then by the order of storing: a stamped event stored first but
    // dated later comes first, one stored last but dated earlier comes last, and those stamped by
    // their ingest time (however close together) list the later stored first.
    await ingestAgentEvents(root, [{ ...claude.stop, timestamp: '9000-01-01T00:00:00Z' }, claude.sessionStart, claude.preToolUse].map((p) => JSON.stringify(p)).join('\n'));
    await ingestAgentEvents(root, [codex.notify, claude.preToolUse].map((p) => JSON.stringify(p)).join('\n'));
    await ingestAgentEvents(root, JSON.stringify({ ...claude.notification, timestamp: '2001-01-01T00:00:00Z' }));

    const all = await listAgentEvents(root);
    expect(all.total).toBe(5);
    expect(all.events.map((e) => e.sourceEvent)).toEqual(['Stop', 'agent-turn-complete', 'PreToolUse', 'SessionStart', 'Notification']);
    expect(all.events.map((e) => e.occurredAt).filter((at) => at.startsWith('9000-') || at.startsWith('2001-'))).toEqual(['9000-01-01T00:00:00.000Z', '2001-01-01T00:00:00.000Z']);
    expect((await listAgentEvents(root, { source: 'codex' })).events.map((e) => e.kind)).toEqual(['agent.stopped']);
    expect((await listAgentEvents(root, { kind: 'tool.started' })).events.map((e) => e.sourceEvent)).toEqual(['PreToolUse']);
    expect(await listAgentEvents(root, { limit: 2 })).toMatchObject({ total: 5, events: [{ sourceEvent: 'Stop' }, { sourceEvent: 'agent-turn-complete' }] });
  });
});
