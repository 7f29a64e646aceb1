/**
 * Rewrites the parity table in docs/runtime-parity.md from the catalog's
 * delivery data (server/catalog/sources/parity-table.ts), e.g. after a source
 * type is added; parity-table.test.ts fails until it is run.
 *
 *   bun scripts/runtime-parity.ts
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { withParityTable } from "../server/catalog/sources/parity-table.ts";

const DOC = join(import.meta.dir, "../docs/runtime-parity.md");
writeFileSync(DOC, withParityTable(readFileSync(DOC, "utf8")));
