/** A timestamp as "3 minutes ago", the exact time in its title; null is "never". */
const relative = new Intl.RelativeTimeFormat(undefined, { numeric: "auto" });

export function LastSeen({ at }: { at: string | null }) {
  if (at === null) return <span className="muted">never</span>;
  const seconds = Math.round((Date.parse(at) - Date.now()) / 1000);
  const abs = Math.abs(seconds);
  const text =
    abs < 60
      ? relative.format(seconds, "second")
      : abs < 3600
        ? relative.format(Math.round(seconds / 60), "minute")
        : abs < 86400
          ? relative.format(Math.round(seconds / 3600), "hour")
          : relative.format(Math.round(seconds / 86400), "day");
  const exact = new Date(at).toLocaleString();
  return (
    <time dateTime={at} title={exact}>
      {text}
    </time>
  );
}
