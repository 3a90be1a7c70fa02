import { FwError } from 'fwjs/vue';

// A failed fw call thrown while a page renders on the server shows the error page (error.vue) with fw's
// code and trace id: Nuxt carries only an error's `data` from the render to that page. Shown here, before
// Nuxt shows the thrown error itself (it keeps the first error shown).
export default defineNuxtPlugin((nuxtApp) => {
  nuxtApp.hook('vue:error', (thrown) => {
    if (!(thrown instanceof FwError)) return;
    const data = { code: thrown.code, traceId: thrown.traceId };
    nuxtApp.runWithContext(() => showError({ statusCode: thrown.status || 500, message: thrown.message, data }));
  });
});
