/**
 * The built UI, inlined by the embedUi macro. Imported lazily by serve.ts so
 * that processes which never serve a page (most tests) do not build it.
 */
import type { UiFile } from "./files.ts";
import { embedUi } from "./embed.ts" with { type: "macro" };

export const UI_FILES: UiFile[] = embedUi();
