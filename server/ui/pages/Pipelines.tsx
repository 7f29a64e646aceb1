/** Stub: built in a following change. */
import { PlaceholderPage } from "./Placeholder.tsx";

export function PipelinesPage() {
  return <PlaceholderPage title="Pipelines" />;
}
