import { fetchFwHealth, fwUrlFrom } from 'fwjs/nuxt';

// GET /api/fw-health: whether this Nuxt server reaches the fw runtime its config points at.
export default defineEventHandler((event) => fetchFwHealth(fwUrlFrom(useRuntimeConfig(event), getRequestURL(event).origin)));
