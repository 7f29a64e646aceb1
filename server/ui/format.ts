/** How the UI words numbers: rates, bytes, durations, short commit ids. */

export function formatRate(perSecond: number): string {
  const digits = perSecond >= 100 ? 0 : perSecond >= 10 ? 1 : 2;
  return `${perSecond.toFixed(digits)}/s`;
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

export function formatDuration(seconds: number): string {
  const s = Math.floor(seconds);
  const parts: [number, string][] = [
    [Math.floor(s / 86400), "d"],
    [Math.floor((s % 86400) / 3600), "h"],
    [Math.floor((s % 3600) / 60), "m"],
    [s % 60, "s"],
  ];
  const from = parts.findIndex(([n]) => n > 0);
  return from === -1
    ? "0s"
    : parts
        .slice(from, from + 2)
        .map(([n, u]) => `${n}${u}`)
        .join(" ");
}

export const shortCommit = (commit: string) => commit.slice(0, 8);
