/** Server-side building blocks for embedding fw's runtime in your own Node server. */
export { createDatabase, type DatabaseOptions, type FwDatabase } from './db/database.ts';
export { createRuntime, type Runtime, type RuntimeOptions } from './create-runtime.ts';
export { createRuntimeHandler, type RuntimeHandler, type RuntimeHandlerOptions } from './http/handler.ts';
export { callEntry, type CallOptions } from './app/call-entry.ts';
export { createAuthenticator, type AuthOption, type Authenticator, type AuthResult } from './auth/authenticator.ts';
export { createJwtAuthenticator, type JwtAuthOptions } from './auth/jwt.ts';
export { systemClock, type Clock } from './core/clock.ts';
export { parseAuthConfig } from './auth/config.ts';
export type { AppDefinition } from './core/app-definition.ts';
export { createLiveHub, type LiveHub, type LiveOptions } from './live/hub.ts';
export { createAiRuntime, type AiRuntime, type AiRuntimeOptions, type AiContext, type AgentRunResult } from './ai/ai-runtime.ts';
export { createMockModel, type MockScript, type MockTurn, type MockTurnInput } from './ai/mock-model.ts';
export type { ModelResolver, ResolvedModel } from './ai/models.ts';
export { createOutboxWorker, type OutboxWorkerOptions } from './app/outbox-worker.ts';
export type { OutboxWorker, OutboxOutcome } from './outbox/worker.ts';
