import type { Diagnostic } from './errors.ts';

/**
 * A failure of a tool-level operation (start a server, migrate, create an app), reported by the CLI
 * as `{ ok: false, kind, message, suggestions }`. Request errors use FwError instead.
 */
export class FwFailure extends Error {
  readonly kind: string;
  readonly suggestions: string[];
  readonly diagnostics: Diagnostic[];
  constructor(kind: string, message: string, options: { suggestions?: string[]; diagnostics?: Diagnostic[]; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'FwFailure';
    this.kind = kind;
    this.suggestions = options.suggestions ?? [];
    this.diagnostics = options.diagnostics ?? [];
  }
}
