/** Stub: built in a following change. */
import { PlaceholderPage } from "./Placeholder.tsx";

export function ServiceAccountsPage() {
  return <PlaceholderPage title="Service accounts" />;
}
