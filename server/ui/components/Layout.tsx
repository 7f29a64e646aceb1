/**
 * The app shell around every signed-in page: a skip link, a top bar (brand,
 * theme toggle, who is signed in, sign-out) and under it the main navigation,
 * a plain list of links with the current page marked by aria-current. The
 * links are grouped by what an operator is doing; on a phone the list folds
 * behind a Menu button and unfolds as a column.
 */
import { useEffect, useState, type ReactNode } from "react";
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
  { href: "/ui/rollouts", label: "Rollouts" },
  { href: "/ui/hosts", label: "Hosts" },
  { href: "/ui/onboarding", label: "Onboarding" },
  { href: "/ui/users", label: "Users" },
  { href: "/ui/service-accounts", label: "Service accounts" },
  { href: "/ui/audit", label: "Audit" },
  { href: "/ui/webhooks", label: "Webhooks" },
  { href: "/ui/system", label: "System" },
] as const;

/** Where a new group of links starts (a divider before it); later entries belong to the group above them. */
const GROUP_STARTS = new Set<string>(["/ui/pipelines", "/ui/hosts", "/ui/users"]);

export function Layout({ children }: { children: ReactNode }) {
  const { pathname } = useLocation();
  const { state, signOut } = useSession();
  const [menuOpen, setMenuOpen] = useState(false);
  // A link followed from the unfolded menu closes it.
  useEffect(() => setMenuOpen(false), [pathname]);
  return (
    <div className="shell">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <div className="topbar-row">
          <Link href="/ui/" className="brand">
            <span className="brand-mark" aria-hidden="true" />
            svc
          </Link>
          <button
            type="button"
            className="button ghost menu-button"
            aria-expanded={menuOpen}
            aria-controls="main-nav"
            onClick={() => setMenuOpen((open) => !open)}
          >
            Menu
          </button>
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
        </div>
        <nav aria-label="Main" id="main-nav" className="mainnav" data-open={menuOpen || undefined}>
          <ul>
            {NAV.map((item) => (
              <li key={item.href} className={GROUP_STARTS.has(item.href) ? "group-start" : undefined}>
                <Link href={item.href} aria-current={pathname.startsWith(item.href) ? "page" : undefined}>
                  {item.label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
      </header>
      <main id="main" className="content" tabIndex={-1}>
        {children}
      </main>
    </div>
  );
}
