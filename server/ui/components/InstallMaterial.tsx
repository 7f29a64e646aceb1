/**
 * What an operator takes to a collector's host: the install one-liner in a
 * read-only box with Copy, or the bootstrap files each in a code block with
 * its target path and Copy. Both hold a freshly minted token, so both say
 * they are shown once. Shared by Onboarding and Add collector.
 */
import type { BootstrapFile } from "../../../shared/enrollment.ts";
import { CopyButton } from "./CopyButton.tsx";
import { LastSeen } from "./LastSeen.tsx";
import "./InstallMaterial.css";

export interface Snippet {
  snippet: string;
  expiresAt: string | null;
}

/** The one-liner in a read-only box, with a Copy button that says when it worked. */
export function SnippetBox({ id, label, snippet }: { id: string; label: string; snippet: Snippet }) {
  return (
    <div className="snippet">
      <label htmlFor={id}>{label}</label>
      <textarea
        id={id}
        className="snippet-box"
        readOnly
        rows={4}
        spellCheck={false}
        value={snippet.snippet}
        onFocus={(event) => event.currentTarget.select()}
      />
      <div className="snippet-actions">
        <CopyButton text={snippet.snippet} />
      </div>
      <p className="hint">
        Shown once: the command holds a new token.
        {snippet.expiresAt && (
          <>
            {" "}
            Expires <LastSeen at={snippet.expiresAt} />.
          </>
        )}
      </p>
    </div>
  );
}

/** Bootstrap files, each under its path; `idPrefix` keeps headings' ids unique on a page. */
export function BootstrapFileList({ files, idPrefix = "bootstrap-file" }: { files: BootstrapFile[]; idPrefix?: string }) {
  return (
    <>
      {files.map((file, i) => (
        <section key={file.path} className="bootstrap-file" aria-labelledby={`${idPrefix}-${i}`}>
          <h3 id={`${idPrefix}-${i}`}>
            <code>{file.path}</code>
          </h3>
          {/* biome-ignore lint/a11y/useAriaPropsSupportedByRole: the file name labels the focusable scroll box; role="region" would repeat the section's region of the same name */}
          <pre className="bootstrap-code" tabIndex={0} aria-labelledby={`${idPrefix}-${i}`}>
            <code>{file.body}</code>
          </pre>
          <div className="snippet-actions">
            <CopyButton text={file.body} label={`Copy ${file.path}`} />
          </div>
        </section>
      ))}
    </>
  );
}
