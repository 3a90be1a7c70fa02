import { StrictMode, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App.tsx';
import { defaultDevIdentity, DevIdentitySwitcher } from './components/DevIdentitySwitcher.tsx';
import { type DevAuth, FwProvider } from './lib/fw.ts';
import './styles.css';

const apiUrl = import.meta.env.VITE_FW_URL ?? '';

// In development the runtime identifies callers by dev headers, and the switcher in the header picks
// the tenant and role; production uses real sign-in (getToken) and renders no switcher.
function Root() {
  const [identity, setIdentity] = useState<DevAuth>(defaultDevIdentity);
  if (!import.meta.env.DEV) {
    return (
      <FwProvider apiUrl={apiUrl}>
        <App />
      </FwProvider>
    );
  }
  return (
    // A new identity remounts the provider (key), so two identities never share a cache or a live stream.
    <FwProvider key={`${identity.tenantId}/${identity.role}`} apiUrl={apiUrl} devAuth={identity}>
      <App identity={<DevIdentitySwitcher value={identity} onChange={setIdentity} />} />
    </FwProvider>
  );
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <Root />
  </StrictMode>,
);
