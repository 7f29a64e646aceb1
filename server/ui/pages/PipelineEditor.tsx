/** Stub: built in a following change. */
import { PlaceholderPage } from "./Placeholder.tsx";

export function PipelineEditorPage({ id }: { id: string }) {
  return <PlaceholderPage title="Pipeline" />;
}
