/** Stub: built in a following change. */
import { PlaceholderPage } from "./Placeholder.tsx";

export function ComponentsPage({ kind }: { kind: "sources" | "destinations" }) {
  return <PlaceholderPage title="Components" />;
}
