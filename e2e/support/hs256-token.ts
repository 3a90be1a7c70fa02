import { SignJWT } from 'jose';

/** The `FW_JWT_*` settings of an app that verifies HS256 tokens (as e2e tests run `fw start`). */
export interface Hs256Settings {
  FW_JWT_ISSUER: string;
  FW_JWT_AUDIENCE: string;
  FW_JWT_HS_SECRET: string;
}

/** A token for `subject` in `tenantId` (role `member`), valid for 30 minutes, signed for `settings`. */
export function hs256Token(settings: Hs256Settings, subject: string, tenantId: string): Promise<string> {
  return new SignJWT({ tenant_id: tenantId, role: 'member' })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(subject)
    .setIssuer(settings.FW_JWT_ISSUER)
    .setAudience(settings.FW_JWT_AUDIENCE)
    .setExpirationTime('30m')
    .sign(new TextEncoder().encode(settings.FW_JWT_HS_SECRET));
}
