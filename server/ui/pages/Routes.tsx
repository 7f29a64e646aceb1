/** Stub: built in a following change. */
import { PlaceholderPage } from "./Placeholder.tsx";

export function RoutesPage() {
  return <PlaceholderPage title="Routes" />;
}
