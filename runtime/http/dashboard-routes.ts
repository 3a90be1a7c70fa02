import type { AppDefinition } from '../core/app-definition.ts';
import type { FwDatabase } from '../db/database.ts';
import type { EntryServices } from '../entry/pipeline.ts';
import { DASHBOARD_API, serveDashboardApi } from './dashboard-api.ts';
import { DASHBOARD_PREFIX, serveDashboardFile } from './dashboard-static.ts';
import type { Route } from './route.ts';

export interface DashboardRoutesContext {
  app: AppDefinition;
  db: FwDatabase;
  dev: boolean;
  services: EntryServices;
  bodyLimit: number;
}

/**
 * The dashboard's routes (docs/dashboard.md), which the handler adds only in dev mode or with
 * `FW_DASHBOARD` and an admin token: otherwise they are not in the route table at all (and
 * `/_fw/dashboard/…` falls to the admin route, closed without the token). The page and its assets
 * hold no data and load without the token; every read and write under `api/` needs it outside dev.
 */
export function dashboardRoutes(context: DashboardRoutesContext): { methods: readonly string[]; path: string; route: Route }[] {
  const redirect: Route = {
    auth: 'none',
    template: () => '/_fw/dashboard',
    serve: () => Promise.resolve({ status: 308, headers: { location: DASHBOARD_PREFIX } }),
  };
  const files: Route = {
    auth: 'none',
    template: () => `${DASHBOARD_PREFIX}*`,
    async serve(call) {
      await serveDashboardFile(call.req, call.res, call.params['*'] ?? '', call.traceId);
      return 'streamed';
    },
  };
  const api: Route = {
    auth: 'admin',
    template: () => `${DASHBOARD_API}*`,
    async serve(call) {
      const body = await serveDashboardApi(call.req, `${DASHBOARD_API}${call.params['*']!}`, { ...context, traceId: call.traceId });
      return { status: 200, body };
    },
  };
  return [
    { methods: ['GET', 'HEAD'], path: '/_fw/dashboard', route: redirect },
    { methods: ['GET', 'HEAD'], path: `${DASHBOARD_PREFIX}*`, route: files },
    { methods: ['GET', 'POST'], path: `${DASHBOARD_API}*`, route: api },
  ];
}
