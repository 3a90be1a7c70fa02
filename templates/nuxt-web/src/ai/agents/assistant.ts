import { agent } from 'fwjs';
import createNote from '../../commands/createNote.ts';
import listNotes from '../../queries/listNotes.ts';

// Runs over POST /ai/agents/run and /ai/agents/chat as the caller: it sees the caller's notes only,
// and creating a note waits for the caller's approval. Without AI_GATEWAY_API_KEY, fw's scripted mock answers.
export default agent({
  model: 'openai/gpt-4o-mini',
  instructions: 'You help the user with their notes. Use the tools; when a tool is not approved, do not retry it.',
  tools: { listNotes, createNote },
  stopWhen: { kind: 'stepCount', maxSteps: 5 },
});
