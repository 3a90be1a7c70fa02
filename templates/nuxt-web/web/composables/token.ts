// Sign-in in production (fw start with FW_AUTH=jwt): the access token this browser was given, sent by
// fw's client as `Authorization: Bearer` (the plugin's getToken, plugins/fw.client.ts). It arrives in a
// sign-in link, <app>/#token=<JWT> (`npx fw auth token --user alice --tenant <uuid> --link <app url>`
// prints one for an app with FW_JWT_HS_SECRET), and is kept in this browser; the fragment never
// reaches a server. With an identity provider, return its access token here instead (docs/auth.md in fw).
const key = 'fw.token';

/** Call once in the browser: keeps the token of a sign-in link and takes it out of the address bar. */
export function keepLinkedToken(): void {
  const linked = new URLSearchParams(location.hash.slice(1)).get('token');
  if (!linked) return;
  localStorage.setItem(key, linked);
  history.replaceState(null, '', location.pathname + location.search);
}

export const getToken = (): string | null => localStorage.getItem(key);
