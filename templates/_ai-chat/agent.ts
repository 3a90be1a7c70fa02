// Made by `fw make ai-chat __AGENT__`: the __AGENT__ agent, served at POST /ai/agents/chat (body: { agent: '__AGENT__' })
// and POST /ai/agents/run. Its tools are the app's commands and queries, run as the calling user inside
// their tenant: queries answer at once, commands wait for the user's approval. Yours to edit: keep only
// the tools it needs, pick the model, tune the instructions.
import { agent } from 'fwjs';
__TOOL_IMPORTS__

export default agent({
  model: 'openai/gpt-4o-mini',
  instructions: [
    'You are the assistant of this app. You act for the signed-in user and see only their tenant’s data;',
    'never claim to see or change anything else. Use the tools to look things up before you answer.',
    'Tools that change data wait for the user to approve them: say what you are about to do and why.',
    'When the user denies a call, do not retry it; ask what they would like instead.',
  ].join(' '),
  tools: __TOOLS__,
  stopWhen: { kind: 'stepCount', maxSteps: 5 },
});
