/**
 * The app shell around every signed-in page: a skip link, the main
 * navigation (a plain list of links, current page marked with
 * aria-current), the theme toggle and sign-out.
 */
import type { ReactNode } from "react";
import { Link, navigate, useLocation } from "../router.tsx";
import { useSession } from "../session.tsx";
import { ThemeToggle } from "./ThemeToggle.tsx";

export const NAV = [
  { href: "/ui/dashboard", label: "Dashboard" },
  { href: "/ui/collectors", label: "Collectors" },
  { href: "/ui/pipelines", label: "Pipelines" },
  { href: "/ui/sources", label: "Sources" },
  { href: "/ui/destinations", label: "Destinations" },
  { href: "/ui/routes", label: "Routes" },
  { href: "/ui/changes", label: "Changes" },
  { href: "/ui/hosts", label: "Hosts" },
  { href: "/ui/onboarding", label: "Onboarding" },
  { href: "/ui/users", label: "Users" },
  { href: "/ui/service-accounts", label: "Service accounts" },
  { href: "/ui/audit", label: "Audit" },
  { href: "/ui/webhooks", label: "Webhooks" },
  { href: "/ui/system", label: "System" },
] as const;

export function Layout({ children }: { children: ReactNode }) {
  const { pathname } = useLocation();
  const { state, signOut } = useSession();
  return (
    <div className="shell">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <Link href="/ui/" className="brand">
          svc
        </Link>
        <nav aria-label="Main" className="mainnav">
          <ul>
            {NAV.map((item) => (
              <li key={item.href}>
                <Link href={item.href} aria-current={pathname.startsWith(item.href) ? "page" : undefined}>
                  {item.label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <div className="topbar-actions">
          <ThemeToggle />
          {state.status === "signedIn" ? (
            <>
              <span className="whoami">{state.user.username}</span>
              <button type="button" className="button" onClick={() => signOut().finally(() => navigate("/ui/login"))}>
                Sign out
              </button>
            </>
          ) : (
            <Link href="/ui/login" className="button">
              Sign in
            </Link>
          )}
        </div>
      </header>
      <main id="main" className="content" tabIndex={-1}>
        {children}
      </main>
    </div>
  );
}
