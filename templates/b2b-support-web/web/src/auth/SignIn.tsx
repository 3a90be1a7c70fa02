import { type FormEvent, useState } from 'react';
import type { FwError } from '../lib/fw.ts';
import { ErrorBanner } from '../components/ErrorBanner.tsx';
import { lastWorkspace, type Session, signIn } from './session.ts';
import { Brand } from '../components/Brand.tsx';

/**
 * The sign-in page of the built app (`fw build` + `fw start` with FW_AUTH=jwt): a workspace, an email
 * and a password. The workspace comes first because people are looked up inside one workspace only.
 */
export function SignIn({ apiUrl, notice, onSignedIn }: { apiUrl: string; notice?: string | undefined; onSignedIn(session: Session): void }) {
  const [workspace, setWorkspace] = useState(lastWorkspace);
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<FwError | null>(null);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setPending(true);
    setError(null);
    try {
      onSignedIn(await signIn(apiUrl, { workspace, email, password }));
    } catch (failure) {
      setError(failure as FwError);
      setPassword('');
    } finally {
      setPending(false);
    }
  }

  return (
    <main className="sign-in">
      <form onSubmit={submit} className="card form sign-in-card" aria-labelledby="sign-in-heading">
        <Brand />
        <h1 id="sign-in-heading">Sign in to the support desk</h1>
        {notice && !error && (
          <p role="status" className="notice">
            {notice}
          </p>
        )}
        <label className="field">
          <span>Workspace</span>
          <input value={workspace} onChange={(e) => setWorkspace(e.target.value)} required maxLength={100} autoComplete="organization" autoCapitalize="none" spellCheck={false} placeholder="acme" autoFocus={!workspace} />
        </label>
        <label className="field">
          <span>Email</span>
          <input type="email" value={email} onChange={(e) => setEmail(e.target.value)} required maxLength={320} autoComplete="username" placeholder="you@example.com" autoFocus={Boolean(workspace)} />
        </label>
        <label className="field">
          <span>Password</span>
          <input type="password" value={password} onChange={(e) => setPassword(e.target.value)} required maxLength={1024} autoComplete="current-password" />
        </label>
        {error && <ErrorBanner error={error} onDismiss={() => setError(null)} />}
        <button type="submit" className="button primary" disabled={pending}>
          {pending ? 'Signing in…' : 'Sign in'}
        </button>
        <p className="hint muted">
          Demo workspaces are <code>acme</code> and <code>globex</code>, with <code>admin@acme.test</code> and <code>agent@acme.test</code> (and the same at globex.test) once the server runs with <code>B2B_DEMO_PASSWORD</code>: see the README.
        </p>
      </form>
    </main>
  );
}

/** Who is signed in, in the header, and the way out. */
export function SessionMenu({ session, onSignOut }: { session: Session; onSignOut(): void }) {
  return (
    <div className="identity" aria-label="Signed in">
      <span className="session-who">
        <strong>{session.user.name}</strong>
        <span className="muted">
          {' '}
          · {session.workspace.name} · {session.user.role}
        </span>
      </span>
      <button type="button" className="button ghost small" onClick={onSignOut}>
        Sign out
      </button>
    </div>
  );
}
