/**
 * Who a fresh dashboard acts as: the templates' dev identity (their `devAuth`: web/src/main.tsx,
 * web/composables/fw.ts), so the rows the web app writes in dev are the rows the dashboard shows and
 * its calls are the web app's user's. The role is picked from src/policies.ts (identity.ts).
 */
export const defaultIdentity = { userId: 'dev-user', tenantId: '00000000-0000-4000-8000-000000000001' } as const;
