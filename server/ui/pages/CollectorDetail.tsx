/** Stub: built in a following change. */
import { PlaceholderPage } from "./Placeholder.tsx";

export function CollectorDetailPage({ id }: { id: string }) {
  return <PlaceholderPage title="Collector" />;
}
