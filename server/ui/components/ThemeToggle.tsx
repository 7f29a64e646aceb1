/** Switches between light and dark; the label says what pressing it does. */
import { useState } from "react";
import { effectiveTheme, setTheme, type Theme } from "../theme.ts";

export function ThemeToggle() {
  const [theme, setState] = useState<Theme>(effectiveTheme);
  const next: Theme = theme === "dark" ? "light" : "dark";
  return (
    <button
      type="button"
      className="button ghost"
      onClick={() => {
        setTheme(next);
        setState(next);
      }}
    >
      {next === "dark" ? "Dark theme" : "Light theme"}
    </button>
  );
}
