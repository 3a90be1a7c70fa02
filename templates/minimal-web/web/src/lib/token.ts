// Sign-in in production (fw start with FW_AUTH=jwt): the access token this browser was given, sent by
// fw's client as `Authorization: Bearer` (FwProvider's getToken). It arrives in a sign-in link,
// <app>/#token=<JWT> (`npx fw auth token --user alice --tenant <uuid> --link <app url>` prints one for
// an app with FW_JWT_HS_SECRET), and is kept in this browser; the fragment never reaches a server.
// With an identity provider, return its access token here instead (docs/auth.md in fw).
const key = 'fw.token';
const linked = new URLSearchParams(location.hash.slice(1)).get('token');
if (linked) {
  localStorage.setItem(key, linked);
  history.replaceState(null, '', location.pathname + location.search);
}

export const getToken = (): string | null => localStorage.getItem(key);
