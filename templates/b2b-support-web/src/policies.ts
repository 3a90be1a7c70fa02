import { definePolicies } from 'fwjs';

// Roles come from the caller's identity (dev headers in development, token claims in production).
// Entries name these policies; a caller whose role does not pass gets 403 forbidden.
export default definePolicies({
  /** Support agents work tickets; admins can do everything agents can. */
  agent: ({ auth }) => auth.role === 'agent' || auth.role === 'admin',
  /** Admins also assign tickets. */
  admin: ({ auth }) => auth.role === 'admin',
});
