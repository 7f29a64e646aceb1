/**
 * Invites and password resets with SMTP configured, against a real SMTP
 * conversation on loopback: the link goes to the user's address and not
 * into the answer, and it works; a refusal by the mail server is 502
 * mail_failed with the server's reason, audited, and changes nothing (no
 * user is created; the earlier reset link keeps working).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { REJECT_MESSAGE, startSmtpSink, type ReceivedMail, type SmtpSink } from "../../server/mail/smtp-sink.ts";
import { startTestServer, type TestServer } from "../harness.ts";

let server: TestServer;
let sink: SmtpSink;
const EXTERNAL = "https://svc.example.com";
/** argon2 is slow by design and the machine may be busy: a safety net, not a timing assertion. */
const SLOW = 30_000;

beforeAll(async () => {
  sink = startSmtpSink();
  server = await startTestServer({
    SVC_EXTERNALURL: EXTERNAL,
    SVC_SMTP_HOST: "127.0.0.1",
    SVC_SMTP_PORT: String(sink.port),
    SVC_SMTP_FROM: "svc <svc@example.com>",
  });
  await server.uiAdmin(); // the bootstrap admin, who has no e-mail address
}, SLOW);
afterAll(async () => {
  await server.stop();
  sink.stop();
}, SLOW);

const post = async (path: string, json?: unknown) => {
  const res = await server.api(path, { method: "POST", json });
  return { status: res.status, body: (await res.json()) as any };
};

/** The one link line of a mail's body. */
function linkIn(mail: ReceivedMail, path: string): string {
  const lines = mail.body.split(/\r?\n/).filter((line) => line.startsWith(`${EXTERNAL}/${path}?token=`));
  expect(lines).toHaveLength(1);
  return lines[0]!;
}

test(
  "an invite is mailed to the user, the answer says where and holds no link, and the mailed link works",
  async () => {
    const invited = await post("/users", { username: "mona", email: "mona@example.com", role: "editor" });
    expect(invited.status).toBe(201);
    expect(invited.body.mailedTo).toBe("mona@example.com");
    expect(invited.body.inviteUrl).toBeUndefined();
    expect(JSON.stringify(invited.body)).not.toContain("svcul_");

    const mail = sink.mails.at(-1)!;
    expect(mail.to).toEqual(["mona@example.com"]);
    expect(mail.headers.to).toBe("mona@example.com");
    expect(mail.headers.subject).toBe("You are invited to svc");
    const url = linkIn(mail, "ui/invite");
    const token = new URL(url).searchParams.get("token")!;
    const accepted = await server.api("/session/invite", { method: "POST", token: null, json: { token, password: "mona-first-password" } });
    expect(accepted.status).toBe(200);

    const audit = await server.call<{ items: { details: Record<string, unknown> }[] }>("/audit?action=user.create");
    expect(audit.items[0]!.details).toMatchObject({ username: "mona", mailedTo: "mona@example.com" });
  },
  SLOW,
);

test(
  "a reset link is mailed, not answered, and works",
  async () => {
    const { id } = (await server.call<{ items: { id: string; username: string }[] }>("/users")).items.find((u) => u.username === "mona")!;
    const reset = await post(`/users/${id}/password-reset`);
    expect(reset.status).toBe(201);
    expect(reset.body).toEqual({ mailedTo: "mona@example.com", expiresAt: expect.any(String) });
    const mail = sink.mails.at(-1)!;
    expect(mail.headers.subject).toBe("Reset your svc password");
    const token = new URL(linkIn(mail, "ui/reset-password")).searchParams.get("token")!;
    const done = await server.api("/session/password-reset", { method: "POST", token: null, json: { token, password: "mona-second-password" } });
    expect(done.status).toBe(200);
  },
  SLOW,
);

test(
  "a refused invite mail is 502 mail_failed with the server's reason, audited, and creates nobody",
  async () => {
    const before = await server.app.users.count();
    const sent = sink.mails.length;
    const refused = await post("/users", { username: "rita", email: "reject-rita@example.com", role: "viewer" });
    expect(refused.status).toBe(502);
    expect(refused.body.error.code).toBe("mail_failed");
    expect(refused.body.error.message).toContain("reject-rita@example.com");
    expect(refused.body.error.message).toContain(REJECT_MESSAGE);
    expect(await server.app.users.count()).toBe(before);
    expect(sink.mails.length).toBe(sent);
    // The name is still free.
    expect((await post("/users", { username: "rita", email: "rita@example.com", role: "viewer" })).status).toBe(201);

    const audit = await server.call<{ items: { outcome: string; details: Record<string, unknown> }[] }>("/audit?action=user.create");
    const failure = audit.items.find((e) => e.outcome === "failure")!;
    expect(failure.details).toMatchObject({ username: "rita", email: "reject-rita@example.com" });
    expect(String(failure.details.error)).toContain(REJECT_MESSAGE);
  },
  SLOW,
);

test(
  "a refused reset mail keeps the earlier link working",
  async () => {
    const { id } = (await server.call<{ items: { id: string; username: string }[] }>("/users")).items.find((u) => u.username === "rita")!;
    const invite = sink.mails.at(-1)!;
    const token = new URL(linkIn(invite, "ui/invite")).searchParams.get("token")!;
    await server.call(`/users/${id}`, "PATCH", { email: "reject-rita@example.com" });
    const refused = await post(`/users/${id}/password-reset`);
    expect(refused.status).toBe(502);
    expect(refused.body.error.code).toBe("mail_failed");
    const audit = await server.call<{ items: { outcome: string }[] }>("/audit?action=user.password_reset_link");
    expect(audit.items[0]!.outcome).toBe("failure");
    const accepted = await server.api("/session/invite", { method: "POST", token: null, json: { token, password: "rita-first-password" } });
    expect(accepted.status).toBe(200);
  },
  SLOW,
);

test(
  "a user without an e-mail address gets the reset link handed to the admin",
  async () => {
    const { id } = (await server.call<{ items: { id: string; username: string }[] }>("/users")).items.find((u) => u.username === "admin")!;
    const sent = sink.mails.length;
    const reset = await post(`/users/${id}/password-reset`);
    expect(reset.status).toBe(201);
    expect(reset.body.resetUrl).toStartWith(`${EXTERNAL}/ui/reset-password?token=svcul_`);
    expect(reset.body.mailedTo).toBeUndefined();
    expect(sink.mails.length).toBe(sent);
  },
  SLOW,
);
