import type { FwError } from 'fwjs/react';

/** Worth trying again as it is: nothing answered, a timeout, a rate limit or a server failure (not a refusal). */
export const isRetryable = (error: FwError) => error.status === 0 || error.status === 408 || error.status === 429 || error.status >= 500;

/** A failed call: what failed, fw's message, its field problems, code and trace id (to find it in the logs), and a way out. */
export function ErrorBanner(props: { title: string; error: FwError; onRetry?: (() => void) | undefined; retryLabel?: string | undefined; onDismiss?: () => void }) {
  const { title, error, onRetry, retryLabel = 'Retry', onDismiss } = props;
  // Field problems the message does not already spell out.
  const problems = error.diagnostics.filter((d) => !error.message.includes(d.message));
  return (
    <div className="banner" role="alert">
      <strong>{title}</strong>
      <p>{error.message}</p>
      {problems.length > 0 && (
        <ul>
          {problems.map((d) => (
            <li key={d.path + d.code}>
              {d.path}: {d.message}
            </li>
          ))}
        </ul>
      )}
      <p className="banner-meta">
        <span>
          Code <code>{error.code}</code>
        </span>
        {error.traceId && (
          <span>
            Trace <code>{error.traceId}</code>
          </span>
        )}
      </p>
      {(onRetry || onDismiss) && (
        <div className="banner-actions">
          {onRetry && <button onClick={onRetry}>{retryLabel}</button>}
          {onDismiss && (
            <button className="secondary" onClick={onDismiss}>
              Dismiss
            </button>
          )}
        </div>
      )}
    </div>
  );
}
