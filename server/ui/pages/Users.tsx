/** Stub: built in a following change. */
import { PlaceholderPage } from "./Placeholder.tsx";

export function UsersPage() {
  return <PlaceholderPage title="Users" />;
}
