/**
 * Light and dark themes: with no stored choice the CSS follows the system's
 * prefers-color-scheme; the toggle stores an explicit choice and sets
 * data-theme on <html>, which the CSS custom properties key on.
 */
export type Theme = "light" | "dark";

const KEY = "svc.theme";

export function storedTheme(): Theme | null {
  const value = localStorage.getItem(KEY);
  return value === "light" || value === "dark" ? value : null;
}

export function effectiveTheme(): Theme {
  return storedTheme() ?? (matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light");
}

export function applyStoredTheme(): void {
  const theme = storedTheme();
  if (theme) document.documentElement.dataset.theme = theme;
}

export function setTheme(theme: Theme): void {
  localStorage.setItem(KEY, theme);
  document.documentElement.dataset.theme = theme;
}
