/**
 * Routes of the UI. The login page and the invite and password-reset pages
 * stand alone (reachable signed out); every other page sits in the layout
 * and sends a signed-out visitor to the login page with ?next=.
 */
import { Layout } from "./components/Layout.tsx";
import { AuditPage } from "./pages/Audit.tsx";
import { ChangesPage } from "./pages/Changes.tsx";
import { CollectorDetailPage } from "./pages/CollectorDetail.tsx";
import { CollectorsPage } from "./pages/Collectors.tsx";
import { ComponentsPage } from "./pages/Components.tsx";
import { HostsPage } from "./pages/Hosts.tsx";
import { LoginPage } from "./pages/Login.tsx";
import { NotFoundPage } from "./pages/NotFound.tsx";
import { OnboardingPage } from "./pages/Onboarding.tsx";
import { PasswordLinkPage } from "./pages/PasswordLink.tsx";
import { PipelineEditorPage } from "./pages/PipelineEditor.tsx";
import { PipelinesPage } from "./pages/Pipelines.tsx";
import { RoutesPage } from "./pages/Routes.tsx";
import { ServiceAccountsPage } from "./pages/ServiceAccounts.tsx";
import { SystemPage } from "./pages/System.tsx";
import { UsersPage } from "./pages/Users.tsx";
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

/** The id after `prefix` in a one-level detail path (/ui/collectors/{id}), else null. */
function detailId(path: string, prefix: string): string | null {
  if (!path.startsWith(prefix)) return null;
  const rest = path.slice(prefix.length);
  return rest !== "" && !rest.includes("/") ? decodeURIComponent(rest) : null;
}

function page(pathname: string) {
  const path = pathname.replace(/\/+$/, "");
  if (path === "/ui") return <Redirect to="/ui/system" />;
  if (path === "/ui/system") return <SystemPage />;
  if (path === "/ui/collectors") return <CollectorsPage />;
  const collectorId = detailId(path, "/ui/collectors/");
  if (collectorId !== null) return <CollectorDetailPage key={collectorId} id={collectorId} />;
  if (path === "/ui/pipelines") return <PipelinesPage />;
  const pipelineId = detailId(path, "/ui/pipelines/");
  if (pipelineId !== null) return <PipelineEditorPage key={pipelineId} id={pipelineId} />;
  if (path === "/ui/sources") return <ComponentsPage key="sources" kind="sources" />;
  if (path === "/ui/destinations") return <ComponentsPage key="destinations" kind="destinations" />;
  if (path === "/ui/routes") return <RoutesPage />;
  if (path === "/ui/changes") return <ChangesPage />;
  if (path === "/ui/hosts" || path.startsWith("/ui/hosts/")) return <HostsPage />;
  if (path === "/ui/onboarding") return <OnboardingPage />;
  if (path === "/ui/users") return <UsersPage />;
  if (path === "/ui/service-accounts") return <ServiceAccountsPage />;
  if (path === "/ui/audit") return <AuditPage />;
  return <NotFoundPage path={pathname} />;
}
