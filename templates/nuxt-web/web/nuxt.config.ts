// fw's module runs the fw Vite plugin in `nuxt dev`: the runtime on this origin, diagnostics in the
// terminal and the overlay, generated files kept current. Production calls runtimeConfig.public.fwUrl
// (env: NUXT_PUBLIC_FW_URL), where `fw start` serves the runtime.
export default defineNuxtConfig({
  modules: ['fwjs/nuxt/module'],
  compatibilityDate: '2025-07-15',
  devtools: { enabled: false },
  telemetry: false,
  // The backend's sources, so vue-tsc sees the schema the entries' result types come from.
  typescript: { tsConfig: { include: ['../../src/**/*'] } },
  runtimeConfig: {
    public: {
      fwUrl: 'http://127.0.0.1:3100',
    },
  },
  app: {
    head: {
      title: 'Notes — fw',
      htmlAttrs: { lang: 'en' },
      link: [{ rel: 'icon', type: 'image/svg+xml', href: '/favicon.svg' }],
    },
  },
});
