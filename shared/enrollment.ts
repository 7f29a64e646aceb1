/**
 * The bootstrap files the REST API answers for installing a collector
 * (/collectors/{id}/bootstrap-files, the onboarding install material), declared
 * once for the server's renderer and routes, the OpenAPI document and the UI.
 */
import { Type, type Static } from "@sinclair/typebox";

/** A file for the collector host; `path` is where it goes there. */
export const BootstrapFileSchema = Type.Object({ path: Type.String(), contentType: Type.String(), body: Type.String() });
export type BootstrapFile = Static<typeof BootstrapFileSchema>;
