import type { FwError } from '../lib/fw.ts';

/**
 * A refused or failed call, as fw reports it: the message, the error code (`forbidden`, `conflict`, …)
 * the app's own reason when it gave one (`invalid_credentials`, …), and the trace id to find the request in the runtime's logs (`fw logs`, the dashboard).
 */
export function ErrorBanner({ error, onDismiss }: { error: FwError; onDismiss?: () => void }) {
  return (
    <div role="alert" className="banner">
      <div className="banner-text">
        <strong>{error.message}</strong>
        <span className="banner-meta">
          <code>{error.code}</code>
          {error.reason && (
            <>
              {' · '}
              <code>{error.reason}</code>
            </>
          )}
          {error.traceId && (
            <>
              {' · trace '}
              <code>{error.traceId}</code>
            </>
          )}
        </span>
      </div>
      {onDismiss && (
        <button type="button" className="button ghost small" onClick={onDismiss} aria-label="Dismiss error">
          ✕
        </button>
      )}
    </div>
  );
}
