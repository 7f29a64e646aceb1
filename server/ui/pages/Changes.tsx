/** Stub: built in a following change. */
import { PlaceholderPage } from "./Placeholder.tsx";

export function ChangesPage() {
  return <PlaceholderPage title="Changes" />;
}
