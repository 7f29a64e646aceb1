/**
 * Who an OpAMP request speaks for. Auth comes before any protobuf is read: a
 * per-collector token (`svcct_`) names its collector; an OpAMP enrollment
 * token (`svcen_`) is checked at once and redeemed with the first message's
 * instance_uid, which binds it (identity.ts). A session lasts only as long as
 * its credential (server/auth/live.ts), and each message re-checks it first.
 */
import { tokenDoc, type LiveCredential } from "../auth/live.ts";
import { tokenKind } from "../auth/tokens.ts";
import { COLLECTORS } from "../collectors/collectors.ts";
import type { CollectorTokens } from "../collectors/tokens.ts";
import type { Enrollment } from "../enrollment/enrollment.ts";
import { AppError, UnauthenticatedError } from "../errors.ts";

/** Who the Authorization header says is calling, checked before any protobuf is read (and again on every message). */
export type Credential =
  | { kind: "collector"; collectorId: string; token: string }
  | { kind: "enrollment"; token: string; tokenId: string; expiresAt: number | null };

export interface CredentialDeps {
  collectorTokens: Pick<CollectorTokens, "verify">;
  enrollment: Pick<Enrollment, "opampToken" | "usableForOpamp">;
}

/** An error that ends the exchange: 401/4xx over HTTP, a close over WebSocket. */
export class Refused extends AppError {}

/** The credential does not speak for this instance_uid: a WebSocket session is held, then closed (see Sessions.hold). */
export class InstanceRefused extends AppError {
  constructor(status: 401 | 403, code: string, message: string) {
    super(status, code, message, [], status === 401 ? { "WWW-Authenticate": 'Bearer realm="svc"' } : {});
  }
}

/** The credential a request's Bearer token (null: none, Basic or malformed) stands for; 401 for none, unknown, revoked or expired. */
export async function authenticate(deps: CredentialDeps, token: string | null): Promise<Credential> {
  if (token === null) throw new UnauthenticatedError("OpAMP needs 'Authorization: Bearer <token>': a collector token or an OpAMP enrollment token.");
  const kind = tokenKind(token);
  if (kind === "collector") {
    const collectorId = await deps.collectorTokens.verify(token);
    if (collectorId !== null) return { kind: "collector", collectorId, token };
  } else if (kind === "enrollment") {
    const enrollment = await deps.enrollment.opampToken(token);
    if (enrollment)
      return { kind: "enrollment", token, tokenId: enrollment.tokenId, expiresAt: enrollment.expiresAt === null ? null : Date.parse(enrollment.expiresAt) };
  }
  throw new UnauthenticatedError("The Bearer token is not valid, or has been revoked or has expired.");
}

/** Whether the credential a session opened with still holds (not rotated, revoked, expired, or its collector deleted). */
export async function stillValid(deps: CredentialDeps, credential: Credential): Promise<boolean> {
  if (credential.kind === "collector") return (await deps.collectorTokens.verify(credential.token)) === credential.collectorId;
  return (credential.expiresAt === null || Date.now() < credential.expiresAt) && (await deps.enrollment.usableForOpamp(credential.token));
}

/** The documents a credential stands on: its token's digest, and a collector token's collector. */
export function standsOn(credential: Credential): LiveCredential {
  if (credential.kind === "collector") return { standsOn: [tokenDoc(credential.token), `${COLLECTORS}/${credential.collectorId}`] };
  return { standsOn: [tokenDoc(credential.token)], ...(credential.expiresAt === null ? {} : { endsAt: credential.expiresAt }) };
}
