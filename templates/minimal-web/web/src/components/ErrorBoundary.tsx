import { Component, type ReactNode } from 'react';

/**
 * What the page shows when a component throws while rendering — a hook called with an entry name the
 * api does not have says so (and the name it probably meant) — instead of a blank page: the error
 * and a way to try again once the code is fixed.
 */
export class ErrorBoundary extends Component<{ children: ReactNode }, { error: Error | undefined }> {
  override state = { error: undefined as Error | undefined };

  static getDerivedStateFromError(error: unknown) {
    return { error: error instanceof Error ? error : new Error(String(error)) };
  }

  override render() {
    const { error } = this.state;
    if (!error) return this.props.children;
    return (
      <main className="app">
        <div className="banner" role="alert">
          <strong>This page failed to render</strong>
          <p>{error.message}</p>
          <div className="banner-actions">
            <button onClick={() => location.reload()}>Reload</button>
          </div>
        </div>
      </main>
    );
  }
}
