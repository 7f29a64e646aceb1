/**
 * The document title of each route, set once by the shell (App.tsx) so that
 * tabs, history and bookmarks name the page: "Collectors · svc". Sections
 * take their label from the main navigation; a detail page is named by its section.
 */
import { useEffect } from "react";
import { NAV } from "./components/Layout.tsx";

const PRODUCT = "svc";

const STANDALONE: Record<string, string> = {
  "/ui/login": "Sign in",
  "/ui/invite": "Accept invite",
  "/ui/reset-password": "Reset password",
};

/** The title for a /ui/ path; an unknown path is "Not found". */
export function pageTitle(pathname: string): string {
  const path = pathname.replace(/\/+$/, "");
  // /ui redirects to the landing page, which then names itself.
  if (path === "/ui") return PRODUCT;
  const label = STANDALONE[path] ?? NAV.find((item) => path === item.href || path.startsWith(item.href + "/"))?.label;
  return `${label ?? "Not found"} · ${PRODUCT}`;
}

export function useDocumentTitle(pathname: string): void {
  useEffect(() => {
    document.title = pageTitle(pathname);
  }, [pathname]);
}
