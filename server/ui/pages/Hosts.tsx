/**
 * Host agents: GET /api/v1/agents as a table (status and text filters in the
 * URL query, "Load more" over the cursor), and one host at /ui/hosts/{id}:
 * its facts, what discovery found (services, collectors, log sources) and a
 * log browser over the agent's browse and sample calls. The browser's place
 * (dir, file, mode, from) lives in the URL too, so reload and Back keep it.
 */
import type { ReactNode } from "react";
import type { HostFacts } from "../../../shared/agent-protocol.ts";
import { AGENT_STATUSES } from "../../../shared/agent-status.ts";
import type { Agent } from "../../../shared/agents.ts";
import { ApiError } from "../api.ts";
import { api } from "../client.ts";
import { useLoad } from "../load.ts";
import { ErrorMessage } from "../components/ErrorMessage.tsx";
import { FilterActions } from "../components/FilterActions.tsx";
import { LoadMore } from "../components/LoadMore.tsx";
import { LastSeen } from "../components/LastSeen.tsx";
import { StatusBadge } from "../components/StatusBadge.tsx";
import { ListSummary } from "../components/ListSummary.tsx";
import { EmptyState } from "../components/EmptyState.tsx";
import { ListTable } from "../components/ListTable.tsx";
import { useFilteredList } from "../list.ts";
import { Link, navigate, useLocation } from "../router.tsx";
import { useCanWrite } from "../schema/editing.tsx";
import { newSourceHref } from "./Components.tsx";
import { formatBytes } from "../format.ts";
import { Facts } from "../components/Facts.tsx";
import { RUNTIME_NAMES } from "../../../shared/vocabulary.ts";

/** Exactly what the UI says when the agent's config turns browsing off. */
export const BROWSE_DISABLED = "log browsing is disabled by agent configuration";

const PAGE_SIZE = 50;

export function HostsPage() {
  const { pathname } = useLocation();
  const rest = pathname.replace(/\/+$/, "").slice("/ui/hosts".length);
  if (rest === "") return <HostList />;
  return <HostDetail id={decodeURIComponent(rest.slice(1))} />;
}

function osText(host: HostFacts | null): string | null {
  if (host === null) return null;
  const name = host.os.distro || host.os.platform;
  return [name, host.os.release, host.os.arch].filter((part) => part !== "").join(" ");
}

function listQuery(search: URLSearchParams, cursor: string | null): URLSearchParams {
  const query = new URLSearchParams({ limit: String(PAGE_SIZE) });
  const status = search.get("status");
  if (status) query.set("status", status);
  const q = search.get("q")?.trim();
  if (q) query.set("q", q);
  if (cursor !== null) query.set("cursor", cursor);
  return query;
}

function Connected({ connected }: { connected: boolean }) {
  return connected ? <span>yes</span> : <span className="muted">no</span>;
}

function HostList() {
  const { search, filterKey, filtered, items, nextCursor, error, loading, loadMore, onFilter } = useFilteredList(
    "/ui/hosts",
    ["status", "q"],
    "/agents",
    listQuery,
  );

  return (
    <section aria-labelledby="hosts-title">
      <div className="page-head">
        <h1 id="hosts-title">Hosts</h1>
      </div>
      <form key={filterKey} className="filters" role="search" aria-label="Filter hosts" onSubmit={onFilter}>
        <div className="field">
          <label htmlFor="filter-status">Status</label>
          <select id="filter-status" name="status" defaultValue={search.get("status") ?? ""}>
            <option value="">Any status</option>
            {AGENT_STATUSES.map((status) => (
              <option key={status} value={status}>
                {status}
              </option>
            ))}
          </select>
        </div>
        <div className="field grow">
          <label htmlFor="filter-q">Search</label>
          <input id="filter-q" name="q" type="search" defaultValue={search.get("q") ?? ""} placeholder="Hostname, id or environment" />
        </div>
        <FilterActions filtered={filtered} base="/ui/hosts" />
      </form>
      <ErrorMessage error={error} />
      <ListSummary
        loading={loading}
        error={error}
        count={items.length}
        more={nextCursor !== null}
        filtered={filtered}
        noun={["host", "hosts"]}
        empty="No hosts yet: install svc-agent on a host to see it here."
        noMatch="No hosts match these filters."
      />
      {!loading && !error && !filtered && items.length === 0 && (
        <EmptyState
          title="Bring in your first host"
          actions={
            <Link href="/ui/onboarding" className="button primary">
              Get an agent token
            </Link>
          }
        >
          svc-agent reports a host's facts, finds its collectors and log files and lets you browse its logs. Mint an agent enrollment token on Onboarding and
          install the agent with it.
        </EmptyState>
      )}
      {items.length > 0 && (
        <ListTable caption={{ id: "hosts-caption", text: "Hosts" }} columns={["Hostname", "Status", "OS", "Environment", "Last seen", "Connected"]}>
          {items.map((a) => (
            <tr key={a.id}>
              <th scope="row">
                <Link href={`/ui/hosts/${encodeURIComponent(a.id)}`} className="name">
                  {a.host?.hostname || a.name}
                </Link>
                <code className="id muted">{a.id}</code>
              </th>
              <td>
                <StatusBadge status={a.status} />
              </td>
              <td>{osText(a.host) ?? <span className="muted">—</span>}</td>
              <td>{a.environment}</td>
              <td>
                <LastSeen at={a.lastSeen} />
              </td>
              <td>
                <Connected connected={a.connected} />
              </td>
            </tr>
          ))}
        </ListTable>
      )}
      <LoadMore nextCursor={nextCursor} loading={loading} onLoad={loadMore} />
    </section>
  );
}

function None() {
  return <span className="muted">—</span>;
}

function HostDetail({ id }: { id: string }) {
  const { data: agent, error } = useLoad(() => api.get("/agents/{id}", { params: { id } }), id, { reset: "all" });

  const title = agent ? agent.host?.hostname || agent.name : id;
  return (
    <section aria-labelledby="host-title">
      <p className="breadcrumb-back">
        <Link href="/ui/hosts">← All hosts</Link>
      </p>
      <div className="page-head">
        <h1 id="host-title">{title}</h1>
        {agent && <StatusBadge status={agent.status} />}
      </div>
      <ErrorMessage error={error} />
      {!agent && !error && <p className="muted">Loading…</p>}
      {agent && (
        <>
          <HostFactsTable agent={agent} />
          <Services agent={agent} />
          <Collectors agent={agent} />
          <LogSources agent={agent} />
          <LogBrowser agent={agent} />
        </>
      )}
    </section>
  );
}

function HostFactsTable({ agent }: { agent: Agent }) {
  const host = agent.host;
  const rows: [string, ReactNode][] = [
    ["Agent id", <code>{agent.id}</code>],
    ["Connected", <Connected connected={agent.connected} />],
    ["Last seen", <LastSeen at={agent.lastSeen} />],
    ["Environment", agent.environment],
    ["Agent version", agent.version ?? <None />],
    ["Operating system", osText(host) ?? <None />],
    ["Kernel", host?.os.kernel || <None />],
    ["CPU", host ? `${host.cpu.model || "unknown"} · ${host.cpu.cores} cores` : <None />],
    ["Memory", host ? formatBytes(host.memoryBytes) : <None />],
    ["IP addresses", host && host.ips.length > 0 ? host.ips.join(", ") : <None />],
    ["Machine id", host?.machineId ? <code>{host.machineId}</code> : <None />],
    [
      "Container",
      host ? (
        host.container.kubernetes ? (
          `Kubernetes pod ${host.container.namespace ?? "?"}/${host.container.podName ?? "?"} on ${host.container.nodeName ?? "?"}`
        ) : host.container.inContainer ? (
          "in a container"
        ) : (
          "no"
        )
      ) : (
        <None />
      ),
    ],
    ["Enrolled", <LastSeen at={agent.enrolledAt} />],
    ["Discovery", <LastSeen at={agent.discoveredAt} />],
  ];
  return (
    <div className="detail-block">
      <Facts caption="Host facts" rows={rows} />
    </div>
  );
}

function Section({ id, title, children }: { id: string; title: string; children: ReactNode }) {
  return (
    <section className="detail-block" aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {children}
    </section>
  );
}

function Services({ agent }: { agent: Agent }) {
  const services = agent.discovery?.services ?? [];
  // A suggestion becomes a source in two clicks: this link opens the Sources form prefilled, then Save.
  const canWrite = useCanWrite();
  const host = agent.host?.hostname || agent.name;
  return (
    <Section id="services-title" title="Discovered services">
      {agent.discovery === null ? (
        <p className="muted">No discovery report yet.</p>
      ) : services.length === 0 ? (
        <p className="muted">No known services found.</p>
      ) : (
        <ListTable labelledBy="services-title" columns={["Service", "PIDs", "Ports", "Log files", "Suggested pipeline"]}>
          {services.map((s) => (
            <tr key={s.fingerprint}>
              <th scope="row">
                <span className="name">{s.title}</span>
                <code className="id muted">{s.fingerprint}</code>
              </th>
              <td>{s.pids.length > 0 ? s.pids.join(", ") : <None />}</td>
              <td>{s.ports.length > 0 ? s.ports.join(", ") : <None />}</td>
              <td>
                {s.logFiles.length > 0 ? (
                  <ul className="plain">
                    {s.logFiles.map((file) => (
                      <li key={file}>
                        <code>{file}</code>
                      </li>
                    ))}
                  </ul>
                ) : (
                  <None />
                )}
              </td>
              <td>
                <code>{[s.pipeline.source.type, ...s.pipeline.processors.map((p) => p.type)].join(" → ")}</code>
                {canWrite && (
                  <Link
                    className="button suggest-source"
                    aria-label={`Create source for ${s.title}`}
                    href={newSourceHref(s.pipeline.source.type, {
                      name: `${s.fingerprint} on ${host}`,
                      config: s.pipeline.source.config,
                      from: `the ${s.title} service found on ${host}`,
                    })}
                  >
                    Create source
                  </Link>
                )}
              </td>
            </tr>
          ))}
        </ListTable>
      )}
    </Section>
  );
}

function Collectors({ agent }: { agent: Agent }) {
  const collectors = agent.discovery?.collectors ?? [];
  return (
    <Section id="host-collectors-title" title="Collectors on this host">
      {collectors.length === 0 ? (
        <p className="muted">{agent.discovery === null ? "No discovery report yet." : "No collectors found."}</p>
      ) : (
        <ListTable labelledBy="host-collectors-title" columns={["Name", "Type", "Running", "Metrics", "Config"]}>
          {collectors.map((c) => (
            <tr key={c.name}>
              <th scope="row">
                <span className="name">{c.name}</span>
                {c.serviceName && <code className="id muted">{c.serviceName}</code>}
              </th>
              <td>{RUNTIME_NAMES[c.collectorType]}</td>
              <td>{c.running ? `yes${c.pid !== null ? ` (pid ${c.pid})` : ""}` : "no"}</td>
              <td>
                <code>{c.metricsUrl}</code> {c.metricsAlive ? "answering" : <span className="muted">not answering</span>}
              </td>
              <td>{c.configPath ? <code>{c.configPath}</code> : <None />}</td>
            </tr>
          ))}
        </ListTable>
      )}
    </Section>
  );
}

function LogSources({ agent }: { agent: Agent }) {
  const sources = agent.discovery?.logSources ?? [];
  return (
    <Section id="log-sources-title" title="Log sources">
      {sources.length === 0 ? (
        <p className="muted">{agent.discovery === null ? "No discovery report yet." : "No log sources found."}</p>
      ) : (
        <ListTable labelledBy="log-sources-title" columns={["Path", "Kind", "Service"]}>
          {sources.map((s) => (
            <tr key={`${s.kind}:${s.path}`}>
              <th scope="row">
                <code>{s.path}</code>
              </th>
              <td>{s.kind}</td>
              <td>{s.service ?? <None />}</td>
            </tr>
          ))}
        </ListTable>
      )}
    </Section>
  );
}

/** The browse error as the UI words it: the exact disabled message, refusals naming the path. */
export function browseError(error: ApiError, path: string): ApiError {
  const said = error.message.replace(/^Agent '[^']*': /, "");
  switch (error.code) {
    case "browse_disabled":
      return new ApiError(error.status, error.code, BROWSE_DISABLED);
    case "outside_allowed_roots":
      return new ApiError(error.status, error.code, `${path} is outside the agent's allowed roots.`, [said]);
    case "denied_by_pattern":
      return new ApiError(error.status, error.code, `${path} is denied by the agent's deny patterns.`, [said]);
    case "agent_offline":
      return new ApiError(error.status, error.code, "The agent is not connected to this server, so its logs cannot be browsed now.", [said]);
    case "agent_timeout":
      return new ApiError(error.status, error.code, "The agent did not answer in time; try again.", [said]);
    default:
      return error;
  }
}

function parentOf(path: string): string {
  const trimmed = path.replace(/\/+$/, "");
  const at = trimmed.lastIndexOf("/");
  return at <= 0 ? "/" : trimmed.slice(0, at);
}

function join(dir: string, name: string): string {
  return dir.endsWith("/") ? `${dir}${name}` : `${dir}/${name}`;
}

/** The crumbs from the allowed root holding `path` (or /) down to `path`. */
function crumbs(path: string, roots: string[]): { label: string; path: string }[] {
  const root = roots.filter((r) => path === r || path.startsWith(r.endsWith("/") ? r : `${r}/`)).sort((a, b) => b.length - a.length)[0];
  const base = root ?? "/";
  const list = [{ label: base, path: base }];
  const rest = path
    .slice(base.length)
    .split("/")
    .filter((part) => part !== "");
  let at = base;
  for (const part of rest) {
    at = join(at, part);
    list.push({ label: part, path: at });
  }
  return list;
}

function LogBrowser({ agent }: { agent: Agent }) {
  const { pathname, search } = useLocation();
  const roots = (agent.browse?.allowedRoots ?? []).map((r) => (r === "*" ? "/" : r));
  const disabled = agent.browse?.enabled === false;
  const dir = search.get("dir") ?? roots[0] ?? "/";
  const file = search.get("file");
  const mode = search.get("mode") === "bytes" ? "bytes" : "lines";
  const from = search.get("from") === "head" ? "head" : "tail";

  // A new directory keeps the old listing on screen until its own answer, but not the old refusal.
  const list = useLoad(disabled ? null : () => api.get("/agents/{id}/browse", { params: { id: agent.id }, query: { path: dir } }), `${agent.id}|${dir}`, {
    clearOnError: true,
    reset: "error",
  });
  const listing = list.data;
  const loadingList = list.pending;
  const listError = list.error && browseError(list.error, dir);
  const read = useLoad(
    disabled || file === null ? null : () => api.get("/agents/{id}/sample", { params: { id: agent.id }, query: { path: file, mode, from } }),
    `${agent.id}|${file}|${mode}|${from}`,
    { reset: "all" },
  );
  const sample = read.data;
  const loadingSample = read.pending;
  const sampleError = read.error && file !== null ? browseError(read.error, file) : null;

  // A tail sample opens scrolled to its end, where the newest lines are.
  const tailScroll = (pre: HTMLPreElement | null) => {
    if (pre && sample?.from === "tail") pre.scrollTop = pre.scrollHeight;
  };

  function go(changes: Record<string, string | null>) {
    const next = new URLSearchParams(search);
    for (const [key, value] of Object.entries(changes)) {
      if (value === null) next.delete(key);
      else next.set(key, value);
    }
    const qs = next.toString();
    navigate(qs === "" ? pathname : `${pathname}?${qs}`);
  }

  return (
    <Section id="log-browser-title" title="Log browser">
      {disabled ? (
        <div role="alert" className="error-box">
          <p className="error-message">{BROWSE_DISABLED}</p>
        </div>
      ) : (
        <>
          {roots.length > 1 && (
            <p className="roots">
              Allowed roots:{" "}
              {roots.map((root, i) => (
                <span key={root}>
                  {i > 0 && ", "}
                  <button type="button" className="linklike" onClick={() => go({ dir: root, file: null })}>
                    {root}
                  </button>
                </span>
              ))}
            </p>
          )}
          <nav aria-label="Directory" className="breadcrumb">
            <ol>
              {crumbs(listing?.path ?? dir, roots).map((crumb, i, all) => (
                <li key={crumb.path}>
                  {i === all.length - 1 ? (
                    <span aria-current="location">{crumb.label}</span>
                  ) : (
                    <button type="button" className="linklike" onClick={() => go({ dir: crumb.path, file: null })}>
                      {crumb.label}
                    </button>
                  )}
                </li>
              ))}
            </ol>
          </nav>
          <ErrorMessage error={listError} />
          <p className="muted" aria-live="polite">
            {loadingList
              ? "Loading…"
              : listing === null
                ? ""
                : listing.entries.length === 0
                  ? "This directory is empty (or everything in it is denied)."
                  : `${listing.entries.length} entr${listing.entries.length === 1 ? "y" : "ies"}.`}
          </p>
          {listing?.truncated && (
            <p className="note" role="note">
              The listing was truncated: the directory holds more entries than the agent's browse.maxDirEntries.
            </p>
          )}
          {listing && listing.entries.length > 0 && (
            <ListTable caption={{ id: "listing-caption", text: "Directory listing" }} columns={["Name", "Type", "Size", "Modified"]} numeric={[2]}>
              {listing.path !== "/" && !roots.includes(listing.path) && (
                <tr>
                  <th scope="row">
                    <button type="button" className="linklike" onClick={() => go({ dir: parentOf(listing.path), file: null })}>
                      .. (up)
                    </button>
                  </th>
                  <td>directory</td>
                  <td />
                  <td />
                </tr>
              )}
              {listing.entries.map((entry) => {
                const full = join(listing.path, entry.name);
                return (
                  <tr key={entry.name} aria-current={file === full ? "true" : undefined}>
                    <th scope="row">
                      {entry.type === "directory" ? (
                        <button type="button" className="linklike" onClick={() => go({ dir: full, file: null })}>
                          {entry.name}/
                        </button>
                      ) : entry.type === "other" ? (
                        <span>{entry.name}</span>
                      ) : (
                        <button type="button" className="linklike" onClick={() => go({ dir: listing.path, file: full })}>
                          {entry.name}
                        </button>
                      )}
                    </th>
                    <td>{entry.type}</td>
                    <td className="num">{entry.type === "directory" ? "" : formatBytes(entry.size)}</td>
                    <td>
                      <LastSeen at={entry.modifiedAt} />
                    </td>
                  </tr>
                );
              })}
            </ListTable>
          )}
          {file !== null && (
            <section className="sample" aria-labelledby="sample-title">
              <h3 id="sample-title">
                Sample of <code>{file}</code>
              </h3>
              <div className="sample-controls">
                <fieldset>
                  <legend>Unit</legend>
                  {(["lines", "bytes"] as const).map((value) => (
                    <label key={value}>
                      <input type="radio" name="sample-mode" value={value} checked={mode === value} onChange={() => go({ mode: value })} /> {value}
                    </label>
                  ))}
                </fieldset>
                <fieldset>
                  <legend>From</legend>
                  {(["head", "tail"] as const).map((value) => (
                    <label key={value}>
                      <input type="radio" name="sample-from" value={value} checked={from === value} onChange={() => go({ from: value })} /> {value}
                    </label>
                  ))}
                </fieldset>
                <button type="button" className="button" onClick={() => go({ file: null })}>
                  Close sample
                </button>
              </div>
              <ErrorMessage error={sampleError} />
              <p className="muted" aria-live="polite">
                {loadingSample
                  ? "Loading…"
                  : sample === null
                    ? ""
                    : `${sample.binary ? "A sample" : sample.mode === "lines" ? `${sample.lines} line${sample.lines === 1 ? "" : "s"}` : `${new TextEncoder().encode(sample.content).length} bytes`} from the ${sample.from} of a ${formatBytes(sample.size)} file${sample.truncated ? " (the file holds more)" : ""}.`}
              </p>
              {sample?.binary && (
                <p className="note" role="note">
                  Binary file: its content is not shown.
                </p>
              )}
              {sample && !sample.binary && (
                <pre ref={tailScroll} className="sample-content" role="region" tabIndex={0} aria-label={`Content of ${sample.path}`}>
                  {sample.content}
                </pre>
              )}
            </section>
          )}
        </>
      )}
    </Section>
  );
}
