import { fwNuxtOptions } from 'fwjs/nuxt';
import { devAuth, fw } from '../composables/fw.ts';

// In the browser: one client, query cache and live stream for the app, calling runtimeConfig.public.fwUrl.
export default defineNuxtPlugin((nuxtApp) => {
  nuxtApp.vueApp.use(fw, fwNuxtOptions(useRuntimeConfig(), import.meta.dev ? { devAuth } : {}));
});
