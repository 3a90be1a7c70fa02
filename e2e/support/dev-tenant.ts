import { randomUUID } from 'node:crypto';
import type { BrowserContext, Page } from 'playwright-core';

/** A tenant no other test writes to: under dev auth a new tenant id starts with no rows. */
export const freshTenantId = (): string => randomUUID();

/**
 * Makes every runtime call of a page (or of all pages of a context) speak for `tenantId`. The template
 * web apps send a fixed dev identity (`x-fw-tenant-id`); this rewrites that header before the request
 * leaves the browser, so a test gets a tenant of its own without changing the app. Call it before
 * navigating.
 */
export async function actAsTenant(target: Page | BrowserContext, tenantId: string): Promise<void> {
  await target.route('**/*', async (route) => {
    const headers = route.request().headers();
    if (headers['x-fw-tenant-id'] === undefined) return route.fallback();
    return route.continue({ headers: { ...headers, 'x-fw-tenant-id': tenantId } });
  });
}
