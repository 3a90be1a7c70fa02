import { StrictMode, useCallback, useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { FwError } from 'fwjs/client';
import { App } from './App.tsx';
import { SessionMenu, SignIn } from './auth/SignIn.tsx';
import { clearSession, isExpired, loadSession, saveSession, type Session } from './auth/session.ts';
import { defaultDevIdentity, DevIdentitySwitcher } from './components/DevIdentitySwitcher.tsx';
import { type DevAuth, FwProvider } from './lib/fw.ts';
import './styles.css';

const apiUrl = import.meta.env.VITE_FW_URL ?? '';

// `fw dev` identifies callers by dev headers: the switcher in the header picks the tenant and role, so
// isolation and the role policies can be tried without accounts. The build (`fw build` + `fw start`,
// where the runtime only accepts tokens: FW_AUTH=jwt) signs in for real and sends the token.
function DevRoot() {
  const [identity, setIdentity] = useState<DevAuth>(defaultDevIdentity);
  return (
    // A new identity remounts the provider (key), so two identities never share a cache or a live stream.
    <FwProvider key={`${identity.tenantId}/${identity.role}`} apiUrl={apiUrl} devAuth={identity}>
      <App role={identity.role} identity={<DevIdentitySwitcher value={identity} onChange={setIdentity} />} />
    </FwProvider>
  );
}

function SignedInRoot() {
  const [session, setSession] = useState<Session | null>(loadSession);
  const [notice, setNotice] = useState<string>();

  const signOut = useCallback((why: string) => {
    clearSession();
    setSession(null);
    setNotice(why);
  }, []);

  // The token expires: back to the sign-in page, saying why.
  useEffect(() => {
    if (!session) return;
    const timer = setTimeout(() => signOut('Your session expired. Sign in again.'), Math.max(0, (session.expiresAt - 5) * 1000 - Date.now()));
    return () => clearTimeout(timer);
  }, [session, signOut]);

  if (!session) {
    return (
      <SignIn
        apiUrl={apiUrl}
        notice={notice}
        onSignedIn={(signedIn) => {
          saveSession(signedIn);
          setNotice(undefined);
          setSession(signedIn);
        }}
      />
    );
  }
  // Asked before every call and live (re)connect; an expired token is never sent (a sleeping laptop
  // wakes up after the timer should have fired).
  const getToken = () => {
    if (isExpired(session)) {
      signOut('Your session expired. Sign in again.');
      throw new FwError({ code: 'client_error', status: 0, message: 'The session expired.' });
    }
    return session.token;
  };
  return (
    // One provider per sign-in (key): the next person never sees the previous one's cached results.
    <FwProvider key={session.token} apiUrl={apiUrl} getToken={getToken}>
      <App role={session.user.role} identity={<SessionMenu session={session} onSignOut={() => signOut('You signed out.')} />} />
    </FwProvider>
  );
}

createRoot(document.getElementById('root')!).render(<StrictMode>{import.meta.env.DEV ? <DevRoot /> : <SignedInRoot />}</StrictMode>);
