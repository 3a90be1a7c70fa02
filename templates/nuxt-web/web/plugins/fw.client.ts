import { fwNuxtOptions } from 'fwjs/nuxt';
import { devAuth, fw } from '../composables/fw.ts';
import { getToken, keepLinkedToken } from '../composables/token.ts';

// In the browser: one client, query cache and live stream for the app, calling runtimeConfig.public.fwUrl.
// In development the runtime identifies callers by dev headers; production signs in with a token (composables/token.ts).
export default defineNuxtPlugin((nuxtApp) => {
  if (!import.meta.dev) keepLinkedToken();
  nuxtApp.vueApp.use(fw, fwNuxtOptions(useRuntimeConfig(), import.meta.dev ? { devAuth } : { getToken }));
});
