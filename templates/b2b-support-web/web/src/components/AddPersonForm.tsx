import { type FormEvent, useState } from 'react';
import { useCommand } from '../lib/fw.ts';
import { ErrorBanner } from './ErrorBanner.tsx';

const roles = ['agent', 'admin'] as const;

/**
 * Admins add the people who sign in to their workspace (src/commands/addUser.ts). The password is set
 * here and told to the person; it is stored only as a scrypt hash.
 */
export function AddPersonForm() {
  const addUser = useCommand('addUser');
  const [email, setEmail] = useState('');
  const [name, setName] = useState('');
  const [role, setRole] = useState<(typeof roles)[number]>('agent');
  const [password, setPassword] = useState('');

  async function add(event: FormEvent) {
    event.preventDefault();
    await addUser.mutateAsync({ email, name, role, password }).then(
      () => {
        setEmail('');
        setName('');
        setPassword('');
      },
      () => undefined, // shown from addUser.error
    );
  }

  return (
    <form onSubmit={add} aria-labelledby="add-person-heading" className="card form">
      <h2 id="add-person-heading">Add a person</h2>
      <p className="muted">They sign in to this workspace with their email and the password you set here.</p>
      <label className="field">
        <span>Name</span>
        <input value={name} onChange={(e) => setName(e.target.value)} required maxLength={200} autoComplete="off" />
      </label>
      <label className="field">
        <span>Email</span>
        <input type="email" value={email} onChange={(e) => setEmail(e.target.value)} required maxLength={320} autoComplete="off" />
      </label>
      <label className="field">
        <span>Role</span>
        <select value={role} onChange={(e) => setRole(e.target.value as (typeof roles)[number])}>
          {roles.map((r) => (
            <option key={r} value={r}>
              {r}
            </option>
          ))}
        </select>
      </label>
      <label className="field">
        <span>Password</span>
        <input type="password" value={password} onChange={(e) => setPassword(e.target.value)} required minLength={12} maxLength={1024} autoComplete="new-password" />
      </label>
      {addUser.error && <ErrorBanner error={addUser.error} onDismiss={addUser.reset} />}
      {addUser.data && !addUser.error && (
        <p role="status" className="notice">
          Added {addUser.data.name} ({addUser.data.role}): they can sign in as {addUser.data.email}.
        </p>
      )}
      <div className="actions spread">
        <p className="hint muted">12 characters or more.</p>
        <button type="submit" className="button primary" disabled={addUser.isPending}>
          {addUser.isPending ? 'Adding…' : 'Add person'}
        </button>
      </div>
    </form>
  );
}
