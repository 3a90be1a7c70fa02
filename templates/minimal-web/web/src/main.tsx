import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App.tsx';
import { ErrorBoundary } from './components/ErrorBoundary.tsx';
import { FwProvider } from './lib/fw.ts';
import { getToken } from './lib/token.ts';

// In development the runtime identifies callers by dev headers; production signs in with a token (lib/token.ts).
const devAuth = import.meta.env.DEV
  ? { userId: 'dev-user', tenantId: '00000000-0000-4000-8000-000000000001', role: 'member' }
  : undefined;

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <FwProvider apiUrl={import.meta.env.VITE_FW_URL ?? ''} devAuth={devAuth} getToken={devAuth ? undefined : getToken}>
      <ErrorBoundary>
        <App />
      </ErrorBoundary>
    </FwProvider>
  </StrictMode>,
);
