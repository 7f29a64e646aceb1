/** One file of the built UI, as embed.ts hands it to the server. */
export interface UiFile {
  /** The URL path it is served at, e.g. /ui/assets/main-1a2b3c.js. */
  path: string;
  /** Its Content-Type. */
  type: string;
  /** JS, CSS and HTML are text; binary assets would need another field. */
  text: string;
  /** Content-hashed names never change content, so they may be cached forever. */
  hashed: boolean;
}

/** The icon, at a fixed name (not hashed): serve.ts also answers /favicon.ico with it. */
export const FAVICON = "/ui/favicon.svg";
