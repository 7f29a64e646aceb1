/** The browser entry point: theme first (before the first paint), then the app. */
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./App.tsx";
import { SessionProvider } from "./session.tsx";
import { applyStoredTheme } from "./theme.ts";
import "./styles.css";

applyStoredTheme();
createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <SessionProvider>
      <App />
    </SessionProvider>
  </StrictMode>,
);
