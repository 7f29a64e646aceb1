/**
 * Routes of the UI. The login page and the invite and password-reset pages
 * stand alone (reachable signed out); every other page sits in the layout
 * and sends a signed-out visitor to the login page with ?next=.
 */
import { Layout, NAV } from "./components/Layout.tsx";
import { AuditPage } from "./pages/Audit.tsx";
import { CollectorsPage } from "./pages/Collectors.tsx";
import { HostsPage } from "./pages/Hosts.tsx";
import { LoginPage } from "./pages/Login.tsx";
import { NotFoundPage } from "./pages/NotFound.tsx";
import { OnboardingPage } from "./pages/Onboarding.tsx";
import { PasswordLinkPage } from "./pages/PasswordLink.tsx";
import { PlaceholderPage } from "./pages/Placeholder.tsx";
import { SystemPage } from "./pages/System.tsx";
import { Redirect, useLocation } from "./router.tsx";
import { useSession } from "./session.tsx";

export function App() {
  const { pathname } = useLocation();
  const { state } = useSession();
  if (state.status === "loading") return <p className="loading">Loading…</p>;
  if (pathname === "/ui/invite") return <PasswordLinkPage purpose="invite" />;
  if (pathname === "/ui/reset-password") return <PasswordLinkPage purpose="password-reset" />;
  if (pathname === "/ui/login") return state.status === "signedIn" ? <Redirect to="/ui/" /> : <LoginPage />;
  if (state.status === "signedOut") return <Redirect to={`/ui/login?next=${encodeURIComponent(pathname)}`} />;
  return <Layout>{page(pathname)}</Layout>;
}

function page(pathname: string) {
  const path = pathname.replace(/\/+$/, "");
  if (path === "/ui") return <Redirect to="/ui/system" />;
  if (path === "/ui/system") return <SystemPage />;
  if (path === "/ui/collectors") return <CollectorsPage />;
  if (path === "/ui/hosts" || path.startsWith("/ui/hosts/")) return <HostsPage />;
  if (path === "/ui/onboarding") return <OnboardingPage />;
  if (path === "/ui/audit") return <AuditPage />;
  const placeholder = NAV.find((item) => item.href === path);
  if (placeholder) return <PlaceholderPage title={placeholder.label} />;
  return <NotFoundPage path={pathname} />;
}
