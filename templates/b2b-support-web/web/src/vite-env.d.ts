/// <reference types="vite/client" />

interface ImportMetaEnv {
  /** The fw runtime's URL when it is not served from the web app's own origin. */
  readonly VITE_FW_URL?: string;
}
