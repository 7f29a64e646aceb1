/**
 * Username/password sign-in. Native form controls with visible labels, so
 * Tab/Enter work without extra code; the server's error message goes into
 * a role="alert" region that is always present, so it is announced.
 */
import { useState, type FormEvent } from "react";
import { ApiError } from "../api.ts";
import { ErrorMessage } from "../components/ErrorMessage.tsx";
import { ThemeToggle } from "../components/ThemeToggle.tsx";
import { navigate, useLocation } from "../router.tsx";
import { useSession } from "../session.tsx";

/** Only same-app paths, so ?next= cannot send a user off-site. */
function safeNext(next: string | null): string {
  return next !== null && next.startsWith("/ui/") && !next.startsWith("//") ? next : "/ui/";
}

export function LoginPage() {
  const { signIn } = useSession();
  const { search } = useLocation();
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setBusy(true);
    setError(null);
    try {
      await signIn(String(form.get("username")), String(form.get("password")));
      navigate(safeNext(search.get("next")), { replace: true });
    } catch (caught) {
      setError(caught instanceof ApiError ? caught : new ApiError(0, "client_error", String(caught)));
    } finally {
      setBusy(false);
    }
  }

  return (
    <div className="login-page">
      <main className="login-card">
        <h1>Sign in to svc</h1>
        <form onSubmit={onSubmit} aria-describedby="login-error">
          <label htmlFor="username">Username</label>
          <input id="username" name="username" autoComplete="username" required autoFocus />
          <label htmlFor="password">Password</label>
          <input id="password" name="password" type="password" autoComplete="current-password" required />
          <button type="submit" className="button primary" disabled={busy}>
            {busy ? "Signing in…" : "Sign in"}
          </button>
        </form>
        <ErrorMessage id="login-error" error={error} />
        <div className="login-footer">
          <ThemeToggle />
        </div>
      </main>
    </div>
  );
}
