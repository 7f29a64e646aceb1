/**
 * The pages behind an invite link (/ui/invite?token=…) and a password-reset
 * link (/ui/reset-password?token=…). They stand alone like the login page:
 * a new password twice, checked here (length, match) and again by the API,
 * which on success signs the visitor in, so they go straight into the app.
 * A used, expired or replaced link gets a plain sentence, not a form.
 */
import { useState, type FormEvent } from "react";
import { ApiError } from "../api.ts";
import { useAction } from "../action.ts";
import { ErrorMessage } from "../components/ErrorMessage.tsx";
import { ThemeToggle } from "../components/ThemeToggle.tsx";
import { Link, navigate, useLocation } from "../router.tsx";
import { useSession, type LinkPurpose } from "../session.tsx";

/** The API's MIN_PASSWORD_LENGTH; the server checks it again. */
export const MIN_PASSWORD_LENGTH = 12;

export const DEAD_LINK_MESSAGE = "This link has been used or has expired; ask an admin for a new one.";

const TEXT: Record<LinkPurpose, { title: string; intro: string; submit: string }> = {
  invite: {
    title: "Welcome to svc",
    intro: "Choose a password to finish setting up your account.",
    submit: "Set password and sign in",
  },
  "password-reset": {
    title: "Reset your password",
    intro: "Choose a new password. Signing in elsewhere ends once it is set.",
    submit: "Set new password and sign in",
  },
};

/** What is wrong with the two entries, or null when they will do. */
export function passwordProblem(password: string, confirmation: string): ApiError | null {
  if (password.length < MIN_PASSWORD_LENGTH) {
    return new ApiError(0, "password_too_short", `The password must be at least ${MIN_PASSWORD_LENGTH} characters long.`);
  }
  if (password !== confirmation) return new ApiError(0, "passwords_differ", "The two passwords are not the same.");
  return null;
}

export function PasswordLinkPage({ purpose }: { purpose: LinkPurpose }) {
  const { redeem } = useSession();
  const { search } = useLocation();
  const token = search.get("token") ?? "";
  const { busy, error, setError, run } = useAction();
  const [dead, setDead] = useState(token === "");
  const text = TEXT[purpose];

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const password = String(form.get("password"));
    const problem = passwordProblem(password, String(form.get("confirmation")));
    setError(problem);
    if (problem) return;
    run(
      () => redeem(purpose, token, password),
      () => navigate("/ui/", { replace: true }),
      (caught) => (caught.code === "invalid_token" ? setDead(true) : setError(caught)),
    );
  }

  return (
    <div className="login-page">
      <main className="login-card">
        <h1>{text.title}</h1>
        {dead ? (
          <>
            <p role="alert" className="notice">
              {DEAD_LINK_MESSAGE}
            </p>
            <p>
              <Link href="/ui/login">Go to sign in</Link>
            </p>
          </>
        ) : (
          <>
            <p className="muted">{text.intro}</p>
            <form onSubmit={onSubmit} aria-describedby="password-hint link-error" noValidate>
              <label htmlFor="password">New password</label>
              <input id="password" name="password" type="password" autoComplete="new-password" minLength={MIN_PASSWORD_LENGTH} required autoFocus />
              <label htmlFor="confirmation">Confirm new password</label>
              <input id="confirmation" name="confirmation" type="password" autoComplete="new-password" minLength={MIN_PASSWORD_LENGTH} required />
              <p id="password-hint" className="hint">
                At least {MIN_PASSWORD_LENGTH} characters.
              </p>
              <button type="submit" className="button primary" disabled={busy}>
                {busy ? "Saving…" : text.submit}
              </button>
            </form>
            <ErrorMessage id="link-error" error={error} />
          </>
        )}
        <div className="login-footer">
          <ThemeToggle />
        </div>
      </main>
    </div>
  );
}
