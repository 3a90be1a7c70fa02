// The customer organisations of this desk: each is a tenant (row-level security keeps its rows to
// itself). People sign in to one by its short name; src/crons.ts records a nightly digest for each.
// A real product would keep these in a table an operator manages; two fixed ones keep the demo small.
export const ACME = '00000000-0000-4000-8000-000000000001';
export const GLOBEX = '00000000-0000-4000-8000-000000000002';

export interface Workspace {
  /** What people type on the sign-in page. */
  slug: string;
  name: string;
  /** The tenant id (a UUID) its rows carry. */
  tenantId: string;
}

export const workspaces: readonly Workspace[] = [
  { slug: 'acme', name: 'Acme', tenantId: ACME },
  { slug: 'globex', name: 'Globex', tenantId: GLOBEX },
];

/** The workspace a sign-in names (case and surrounding spaces ignored), or undefined. */
export function findWorkspace(slug: string): Workspace | undefined {
  const wanted = slug.trim().toLowerCase();
  return workspaces.find((w) => w.slug === wanted);
}
