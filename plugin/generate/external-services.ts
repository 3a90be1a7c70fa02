import { fwVersion } from '../../runtime/core/version.ts';
import type { AppModel, ExternalServiceModel } from '../analyse/app-model.ts';

/**
 * `src/fw/_generated/externalServices.json`: the external services the app reaches through fw's
 * bridge — transport and address (no secrets: manifests carry none), where each manifest came from,
 * and every entry with its route, policy, risk, approval and declared effects.
 */
export interface ExternalServicesJson {
  fwVersion: string;
  services: ExternalServiceModel[];
}

export function buildExternalServices(model: AppModel): ExternalServicesJson {
  return { fwVersion, services: model.external };
}
