/** The Publish block: the fleet's plan → confirm flow, publishing to one collector, and what the last publish answered. */
import { useState } from "react";
import { PublishOne } from "./PublishOne.tsx";
import { PublishPlanner } from "./PublishPlanner.tsx";
import "./publish.css";

export function Publish({ onPublished, onPlanned }: { onPublished: () => void; onPlanned: () => void }) {
  const [result, setResult] = useState("");
  const published = (text: string) => {
    setResult(text);
    onPublished();
  };
  return (
    <section className="detail-block" aria-labelledby="publish-title">
      <h2 id="publish-title">Publish</h2>
      <p className="muted">Publishing delivers the last commit; collectors whose config did not change are left alone.</p>
      <div className="publish-actions">
        <PublishPlanner onPublished={published} onPlanned={onPlanned} />
        <PublishOne onPublished={published} />
      </div>
      <p role="status" className="muted">
        {result}
      </p>
    </section>
  );
}
