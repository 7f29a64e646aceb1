/**
 * Routes of the UI. The login page and the invite and password-reset pages
 * stand alone (reachable signed out); every other page sits in the layout
 * and sends a signed-out visitor to the login page with ?next=.
 *
 * The pages with a large dependency (the pipeline editor's @xyflow/react, the
 * collector page's uPlot charts, the collector list's virtualiser, the diff
 * view of Changes) are separate chunks, fetched the first time one is opened,
 * so the first paint of every other page does not wait for them.
 */
import { lazy, Suspense, type ReactNode } from "react";
import { Layout } from "./components/Layout.tsx";
import { AuditPage } from "./pages/Audit.tsx";
import { ComponentsPage } from "./pages/Components.tsx";
import { DashboardPage } from "./pages/Dashboard.tsx";
import { HostsPage } from "./pages/Hosts.tsx";
import { LoginPage } from "./pages/Login.tsx";
import { NotFoundPage } from "./pages/NotFound.tsx";
import { OnboardingPage } from "./pages/Onboarding.tsx";
import { PasswordLinkPage } from "./pages/PasswordLink.tsx";
import { PipelinesPage } from "./pages/Pipelines.tsx";
import { RolloutsPage } from "./pages/Rollouts.tsx";
import { RoutesPage } from "./pages/Routes.tsx";
import { ServiceAccountsPage } from "./pages/ServiceAccounts.tsx";
import { SystemPage } from "./pages/System.tsx";
import { UsersPage } from "./pages/Users.tsx";
import { WebhooksPage } from "./pages/Webhooks.tsx";
import { Redirect, useLocation } from "./router.tsx";
import { useSession } from "./session.tsx";
import { useDocumentTitle } from "./title.ts";

const ChangesPage = lazy(() => import("./pages/Changes.tsx").then((m) => ({ default: m.ChangesPage })));
const CollectorsPage = lazy(() => import("./pages/Collectors.tsx").then((m) => ({ default: m.CollectorsPage })));
const CollectorDetailPage = lazy(() => import("./pages/CollectorDetail.tsx").then((m) => ({ default: m.CollectorDetailPage })));
const PipelineEditorPage = lazy(() => import("./pages/PipelineEditor.tsx").then((m) => ({ default: m.PipelineEditorPage })));

export function App() {
  const { pathname } = useLocation();
  const { state } = useSession();
  useDocumentTitle(pathname);
  if (state.status === "loading") return <Loading />;
  if (pathname === "/ui/invite") return <PasswordLinkPage purpose="invite" />;
  if (pathname === "/ui/reset-password") return <PasswordLinkPage purpose="password-reset" />;
  if (pathname === "/ui/login") return state.status === "signedIn" ? <Redirect to="/ui/" /> : <LoginPage />;
  if (state.status === "signedOut") return <Redirect to={`/ui/login?next=${encodeURIComponent(pathname)}`} />;
  return (
    <Layout>
      <Suspense fallback={<Loading />}>{page(pathname)}</Suspense>
    </Layout>
  );
}

function Loading(): ReactNode {
  return <p className="loading">Loading…</p>;
}

/** The id after `prefix` in a one-level detail path (/ui/collectors/{id}), else null. */
function detailId(path: string, prefix: string): string | null {
  if (!path.startsWith(prefix)) return null;
  const rest = path.slice(prefix.length);
  return rest !== "" && !rest.includes("/") ? decodeURIComponent(rest) : null;
}

function page(pathname: string) {
  const path = pathname.replace(/\/+$/, "");
  // The landing page after sign-in (the login page sends to /ui/ unless ?next= says otherwise).
  if (path === "/ui") return <Redirect to="/ui/dashboard" />;
  if (path === "/ui/dashboard") return <DashboardPage />;
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
  if (path === "/ui/rollouts") return <RolloutsPage />;
  if (path === "/ui/hosts" || path.startsWith("/ui/hosts/")) return <HostsPage />;
  if (path === "/ui/onboarding") return <OnboardingPage />;
  if (path === "/ui/users") return <UsersPage />;
  if (path === "/ui/webhooks") return <WebhooksPage />;
  if (path === "/ui/service-accounts") return <ServiceAccountsPage />;
  if (path === "/ui/audit") return <AuditPage />;
  return <NotFoundPage path={pathname} />;
}
