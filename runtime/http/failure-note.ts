import type { FwError } from '../core/errors.ts';
import { ENTRY_FAILED } from '../entry/failure-place.ts';
import type { Failure } from '../telemetry/trace-notes.ts';

/** A failure as fw dev's dashboard shows it beside its trace: the answer's code, status and message, and the place in the app's source. */
export function failureNote(error: FwError): Failure {
  const place = error.diagnostics.find((d) => d.code === ENTRY_FAILED)?.path;
  return {
    code: error.code,
    status: error.status,
    message: error.message,
    ...(place ? { location: place } : {}),
    ...(error.diagnostics.length ? { diagnostics: error.diagnostics.map(({ path, code, message }) => ({ path, code, message })) } : {}),
  };
}
