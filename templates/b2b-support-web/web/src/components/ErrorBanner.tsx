import type { FwError } from '../lib/fw.ts';

/** Worth trying again as it is: nothing answered, a timeout, a rate limit or a server failure (not a refusal). */
export const isRetryable = (error: FwError) => error.status === 0 || error.status === 408 || error.status === 429 || error.status >= 500;

/**
 * A refused or failed call, as fw reports it: what failed, fw's message, the error code (`forbidden`,
 * `conflict`, …), the app's own reason when it gave one (`invalid_credentials`, …), and the trace id to
 * find the request in the runtime's logs (`fw logs`, the dashboard); Retry when trying again can help.
 */
export function ErrorBanner({ title, error, onRetry, onDismiss }: { title?: string; error: FwError; onRetry?: (() => void) | undefined; onDismiss?: () => void }) {
  return (
    <div role="alert" className="banner">
      <div className="banner-text">
        <strong>{title ?? error.message}</strong>
        {title && <p>{error.message}</p>}
        <p className="banner-meta">
          <span>
            Code <code>{error.code}</code>
          </span>
          {error.reason && (
            <span>
              Reason <code>{error.reason}</code>
            </span>
          )}
          {error.traceId && (
            <span>
              Trace <code>{error.traceId}</code>
            </span>
          )}
        </p>
        {onRetry && (
          <div className="banner-actions">
            <button type="button" className="button small" onClick={onRetry}>
              Retry
            </button>
          </div>
        )}
      </div>
      {onDismiss && (
        <button type="button" className="button ghost small" onClick={onDismiss} aria-label="Dismiss error">
          ✕
        </button>
      )}
    </div>
  );
}
