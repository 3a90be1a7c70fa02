// The fw runtime's URL: runtimeConfig.public.fwUrl, overridden by NUXT_PUBLIC_FW_URL (`fw dev` sets it).
export default defineNuxtConfig({
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
