// Made by `fw make ai-chat __AGENT__`: a chat with the __AGENT__ agent (src/ai/agents/__AGENT__.ts) over the runtime's
// POST /ai/agents/chat, as the user FwProvider signs in. Tool calls that change data wait here for
// Approve / Deny. Yours to edit (fw never rewrites it).
import { useChat } from '@ai-sdk/react';
import { DefaultChatTransport, getToolName, isToolUIPart, lastAssistantMessageIsCompleteWithApprovalResponses, type UIMessage } from 'ai';
import { type FormEvent, useMemo, useState } from 'react';
import { useFwRuntime } from '__BRIDGE__';

type Approve = (approvalId: string, approved: boolean) => void;

export function __COMPONENT__() {
  const runtime = useFwRuntime();
  // `runtime.apiUrl` is '' when the runtime serves the page's own origin: the URL is then relative.
  const transport = useMemo(
    () => new DefaultChatTransport({ api: `${runtime.apiUrl}/ai/agents/chat`, headers: () => runtime.headers(), body: { agent: '__AGENT__' } }),
    [runtime],
  );
  const { messages, sendMessage, addToolApprovalResponse, status, error, stop } = useChat({
    transport,
    // Once every pending approval has an answer, the chat continues on its own.
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
  });
  const [input, setInput] = useState('');
  const busy = status === 'submitted' || status === 'streaming';
  const waiting = messages.some((m) => m.parts.some((p) => isToolUIPart(p) && p.state === 'approval-requested' && !p.approval.isAutomatic));

  function send(event: FormEvent) {
    event.preventDefault();
    const text = input.trim();
    if (text === '' || busy) return;
    void sendMessage({ text });
    setInput('');
  }

  const approve: Approve = (id, approved) => void addToolApprovalResponse({ id, approved });

  return (
    <section data-testid="ai-chat" aria-label="__TITLE__ chat" style={{ display: 'grid', gap: 12, maxWidth: 640 }}>
      <ol aria-label="Messages" style={{ listStyle: 'none', padding: 0, margin: 0, display: 'grid', gap: 8 }}>
        {messages.map((message) => (
          <ChatMessage key={message.id} message={message} approve={approve} />
        ))}
      </ol>
      <p role="status" data-testid="ai-status" style={{ margin: 0, color: 'gray' }}>
        {status === 'submitted' ? 'Thinking…' : status === 'streaming' ? 'Answering…' : waiting ? 'Waiting for your approval.' : ''}
      </p>
      {error && (
        <p role="alert" data-testid="ai-error" style={{ margin: 0, color: 'crimson' }}>
          The assistant could not answer: {error.message}
        </p>
      )}
      <form onSubmit={send} aria-label="Send a message" style={{ display: 'flex', gap: 8 }}>
        <input
          data-testid="ai-chat-input"
          aria-label="Message"
          placeholder="Ask the assistant…"
          value={input}
          onChange={(e) => setInput(e.target.value)}
          style={{ flex: 1 }}
        />
        <button type="submit" data-testid="ai-chat-send" aria-label="Send" disabled={busy || input.trim() === ''}>
          Send
        </button>
        {busy && (
          <button type="button" aria-label="Stop answering" onClick={() => void stop()}>
            Stop
          </button>
        )}
      </form>
    </section>
  );
}

function ChatMessage({ message, approve }: { message: UIMessage; approve: Approve }) {
  return (
    <li data-testid="ai-message" data-role={message.role} aria-label={message.role === 'user' ? 'You' : 'Assistant'}>
      <strong>{message.role === 'user' ? 'You' : 'Assistant'}: </strong>
      {message.parts.map((part, index) => {
        if (part.type === 'text') return <span key={index}>{part.text}</span>;
        if (!isToolUIPart(part)) return null;
        const name = getToolName(part);
        return (
          <div key={part.toolCallId} data-testid="ai-tool" data-tool={name} data-state={part.state} style={{ margin: '4px 0', padding: 8, border: '1px solid #ddd' }}>
            <div>
              Tool <code>{name}</code> — {part.state}
            </div>
            {part.input !== undefined && <pre aria-label={`${name} input`}>{JSON.stringify(part.input, null, 2)}</pre>}
            {part.state === 'approval-requested' && !part.approval.isAutomatic && (
              <div role="group" aria-label={`Approve ${name}?`} style={{ display: 'flex', gap: 8 }}>
                <button type="button" data-testid="ai-approve" aria-label={`Approve ${name}`} onClick={() => approve(part.approval.id, true)}>
                  Approve
                </button>
                <button type="button" data-testid="ai-deny" aria-label={`Deny ${name}`} onClick={() => approve(part.approval.id, false)}>
                  Deny
                </button>
              </div>
            )}
            {part.state === 'output-available' && <pre aria-label={`${name} output`}>{JSON.stringify(part.output, null, 2)}</pre>}
            {part.state === 'output-error' && <p role="alert">{part.errorText}</p>}
            {part.state === 'output-denied' && <p>Denied{part.approval.reason ? `: ${part.approval.reason}` : '.'}</p>}
          </div>
        );
      })}
    </li>
  );
}
