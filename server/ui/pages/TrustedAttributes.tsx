/**
 * The System page's list of trusted reported attributes (GET and PUT
 * /system/trusted-attributes): which keys collectors report about themselves
 * that pipeline matchers may read. Everyone sees it; an admin edits it (each
 * change audited, and refused while a pipeline's matchers read a key it drops).
 */
import { useState, type FormEvent } from "react";
import { api } from "../client.ts";
import { useAction } from "../action.ts";
import { useLoad } from "../load.ts";
import { ErrorMessage } from "../components/ErrorMessage.tsx";
import { useSession } from "../session.tsx";
import type { TrustedList } from "../../../shared/system.ts";

function keysOf(text: string): string[] {
  return text
    .split(/[\s,]+/)
    .map((key) => key.trim())
    .filter((key) => key !== "");
}

export function TrustedAttributesSection() {
  const { state } = useSession();
  const isAdmin = state.status === "signedIn" && state.user.role === "admin";
  const [text, setText] = useState("");
  const showList = (answer: TrustedList) => setText(answer.listed.join(", "));
  const loaded = useLoad(() => api.get("/system/trusted-attributes"), "", { onData: showList });
  const list = loaded.data;
  const { busy: saving, error: saveError, run } = useAction();
  const error = saveError ?? loaded.error;

  function onSubmit(event: FormEvent) {
    event.preventDefault();
    run(
      () => api.put("/system/trusted-attributes", { body: { keys: keysOf(text) } }),
      (answer) => {
        loaded.setData(answer);
        showList(answer);
      },
    );
  }

  return (
    <section className="detail-block" aria-labelledby="trusted-attributes-title">
      <h2 id="trusted-attributes-title">Trusted reported attributes</h2>
      <p className="muted">
        What a collector reports about itself is shown on its page but never selects a pipeline, unless its key is trusted here. Tags, environment and
        collector.id, collector.name, collector.mode always may.
      </p>
      {list && (
        <p>
          From the server configuration (fleet.trustedAttributes):{" "}
          {list.configured.length > 0 ? list.configured.join(", ") : <span className="muted">none</span>}
        </p>
      )}
      {list && !isAdmin && <p>Trusted here: {list.listed.length > 0 ? list.listed.join(", ") : <span className="muted">none</span>}</p>}
      {list && isAdmin && (
        <form className="account-form" onSubmit={onSubmit} aria-label="Trusted reported attributes">
          <label>
            Trusted here (comma-separated keys, e.g. host.name, os.type)
            <input type="text" value={text} onChange={(e) => setText(e.target.value)} />
          </label>
          <button type="submit" className="button" disabled={saving}>
            Save
          </button>
        </form>
      )}
      <ErrorMessage error={error} />
    </section>
  );
}
