/** A captioned table of label → value rows: the facts of a collector, a host, the server. */
import type { ReactNode } from "react";

export function Facts({ caption, rows }: { caption: string; rows: readonly (readonly [string, ReactNode])[] }) {
  return (
    <table className="kv">
      <caption>{caption}</caption>
      <tbody>
        {rows.map(([label, value]) => (
          <tr key={label}>
            <th scope="row">{label}</th>
            <td>{value}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
