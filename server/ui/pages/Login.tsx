/**
 * Username/password sign-in. Native form controls with visible labels, so
 * Tab/Enter work without extra code; the server's error message goes into
 * a role="alert" region that is always present, so it is announced.
 */
import type { FormEvent } from "react";
import { useAction } from "../action.ts";
import { ErrorMessage } from "../components/ErrorMessage.tsx";
import { ThemeToggle } from "../components/ThemeToggle.tsx";
import { navigate, useLocation } from "../router.tsx";
import { useSession } from "../session.tsx";

/** Only same-app paths, so ?next= cannot send a user off-site. */
function safeNext(next: string | null): string {
  return next?.startsWith("/ui/") && !next.startsWith("//") ? next : "/ui/";
}

export function LoginPage() {
  const { signIn } = useSession();
  const { search } = useLocation();
  const { busy, error, run } = useAction();

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    run(
      () => signIn(String(form.get("username")), String(form.get("password"))),
      () => navigate(safeNext(search.get("next")), { replace: true }),
    );
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
