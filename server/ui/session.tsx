/**
 * Who is signed in. Asks GET /api/v1/session/status once at start; sign-in and
 * sign-out go through the same API and keep the CSRF token in the API
 * client. "unavailable" means the server gave no usable answer (e.g. an
 * older server without the session API): the shell still renders and each
 * page shows the API's own error instead of looping back to the login page.
 */
import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from "react";
import type { Session as SessionAnswer, User } from "../../shared/users.ts";
import { type ApiError, setCsrfToken } from "./api.ts";
import { api } from "./client.ts";

export type SessionState = { status: "loading" } | { status: "signedIn"; user: User } | { status: "signedOut" } | { status: "unavailable"; error: ApiError };

interface SessionApi {
  state: SessionState;
  signIn(username: string, password: string): Promise<void>;
  /** Redeems an invite or password-reset link; the API signs the visitor in on success. */
  redeem(purpose: LinkPurpose, token: string, password: string): Promise<void>;
  signOut(): Promise<void>;
}

export type LinkPurpose = "invite" | "password-reset";

const SessionContext = createContext<SessionApi | null>(null);

export function SessionProvider({ children }: { children: ReactNode }) {
  const [state, setState] = useState<SessionState>({ status: "loading" });

  const accept = useCallback((answer: SessionAnswer) => {
    setCsrfToken(answer.csrfToken);
    setState({ status: "signedIn", user: answer.user });
  }, []);

  useEffect(() => {
    // The status call answers 200 when signed out: a 401 here would be a console
    // error and an auth failure counted against the address on every visit.
    api.get("/session/status").then(
      (answer) => (answer.signedIn ? accept(answer) : setState({ status: "signedOut" })),
      (error: ApiError) => setState({ status: "unavailable", error }),
    );
  }, [accept]);

  const signIn = useCallback(async (username: string, password: string) => accept(await api.post("/session", { body: { username, password } })), [accept]);

  const redeem = useCallback(
    async (purpose: LinkPurpose, token: string, password: string) => accept(await api.post(`/session/${purpose}`, { body: { token, password } })),
    [accept],
  );

  const signOut = useCallback(async () => {
    try {
      await api.delete("/session");
    } finally {
      setCsrfToken(null);
      setState({ status: "signedOut" });
    }
  }, []);

  const value = useMemo(() => ({ state, signIn, redeem, signOut }), [state, signIn, redeem, signOut]);
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}

export function useSession(): SessionApi {
  const session = useContext(SessionContext);
  if (!session) throw new Error("useSession outside SessionProvider");
  return session;
}
