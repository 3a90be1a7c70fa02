import { fwNuxtOptions } from 'fwjs/nuxt';
import { devAuth, fw } from '../composables/fw.ts';

// While rendering on the server: composables render their loading state and open nothing (the
// browser subscribes after hydration); useFwClient() calls work, e.g. inside useAsyncData.
export default defineNuxtPlugin((nuxtApp) => {
  nuxtApp.vueApp.use(fw, fwNuxtOptions(useRuntimeConfig(), { server: true, ...(import.meta.dev ? { devAuth } : {}) }, useRequestURL().origin));
});
