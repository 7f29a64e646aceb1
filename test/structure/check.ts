/**
 * The structure check over one root directory: every module is placed by the
 * layer table (layers.ts), and every import, type-only ones too, must point
 * where the table allows. Cycles are found between folders, not files: two
 * folders that import each other cannot be understood, tested or moved apart,
 * whichever files carry the link.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { CHANNELS_SHARE, FILES, FOLDERS, MAY_IMPORT, REFUSED, type Layer } from "./layers.ts";
import { cyclesOf, scan, type Scan } from "./scan.ts";

export interface Report {
  /** Folders (or files directly under server/) the table does not place, by name. */
  unassigned: string[];
  /** Table entries that name no module: a moved or deleted folder left behind. */
  stale: string[];
  /** `from → to: why` for each import the table refuses. */
  wrong: string[];
  /** Each folder-level cycle: the folders that reach each other, sorted. */
  cycles: string[][];
  /** `module: import(…)` for each dynamic import with a computed path. */
  computed: string[];
}

/** The files under server/ui/ that run in the server: the UI's tsconfig leaves them out of the browser build's check. */
export function servedByServer(root: string): string[] {
  const config = ts.readConfigFile(join(root, "server/ui/tsconfig.json"), (path) => readFileSync(path, "utf8"));
  if (config.error !== undefined) throw new Error(`server/ui/tsconfig.json: ${ts.flattenDiagnosticMessageText(config.error.messageText, "\n")}`);
  return (config.config.exclude as string[]).filter((pattern) => !pattern.includes("*")).map((file) => `server/ui/${file}`);
}

/** The table entry a module belongs to: its own (a file under server/) or its nearest listed folder. */
function folderOf(module: string): string | undefined {
  let best: string | undefined;
  for (const entry of Object.keys(FOLDERS)) {
    if ((module === entry || module.startsWith(`${entry}/`)) && (best === undefined || entry.length > best.length)) best = entry;
  }
  return best;
}

/** How an unplaced module is named: its outermost folder below the scanned one, or itself when it lies directly in it. */
function unplacedName(module: string): string {
  const parts = module.split("/");
  return parts.slice(0, Math.min(2, parts.length)).join("/");
}

function refusal(fromFolder: string, toFolder: string): string | undefined {
  return REFUSED.find((rule) => rule.to === toFolder && (rule.from === "*" ? !(rule.except ?? []).includes(fromFolder) : rule.from === fromFolder))?.why;
}

function program(module: string): string {
  return module.split("/")[0]!;
}

export function checkStructure(root: string, { graph, computed }: Scan = scan(root)): Report {
  const edge = new Set(servedByServer(root));
  const folder = new Map<string, string>();
  const unassigned = new Set<string>();
  for (const module of graph.keys()) {
    const entry = folderOf(module);
    if (entry === undefined) unassigned.add(unplacedName(module));
    else folder.set(module, entry);
  }
  const layerOf = (module: string): Layer => FILES[module] ?? (edge.has(module) ? "edge" : FOLDERS[folder.get(module)!]!);

  const wrong: string[] = [];
  const folders = new Map<string, Set<string>>();
  for (const [from, targets] of graph) {
    const fromFolder = folder.get(from);
    if (fromFolder === undefined) continue;
    const out = folders.get(fromFolder) ?? folders.set(fromFolder, new Set()).get(fromFolder)!;
    for (const to of targets) {
      const toFolder = folder.get(to);
      if (toFolder === undefined) continue;
      if (toFolder !== fromFolder) out.add(toFolder);
      const [fromLayer, toLayer] = [layerOf(from), layerOf(to)];
      let why: string | undefined;
      if (!MAY_IMPORT[fromLayer].includes(toLayer)) {
        why = `${fromLayer} may not import ${toLayer}`;
        if ([program(from), program(to)].sort().join() === "agent,server") why += " (the server and the agent meet only in shared/)";
      } else if (fromLayer === "channels" && toLayer === "channels" && fromFolder !== toFolder && toFolder !== CHANNELS_SHARE) {
        why = `a channel imports only ${CHANNELS_SHARE}/, not another channel`;
      } else if (fromFolder !== toFolder) {
        why = refusal(fromFolder, toFolder);
      }
      if (why !== undefined) wrong.push(`${from} → ${to}: ${why}`);
    }
  }

  const placed = new Set(folder.values());
  const stale = [...Object.keys(FOLDERS).filter((entry) => !placed.has(entry)), ...Object.keys(FILES).filter((file) => !graph.has(file))];
  const folderGraph = new Map([...placed].map((f) => [f, [...(folders.get(f) ?? [])]]));
  return { unassigned: [...unassigned].sort(), stale, wrong, cycles: cyclesOf(folderGraph), computed };
}
