/**
 * The SMTP mailer against a real SMTP conversation on loopback: the envelope,
 * headers and body arrive as sent, credentials are used when configured, and
 * a refusal or an unreachable server is a 502 mail_failed carrying the
 * server's own reason.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { freePort } from "../../test/process/spawn.ts";
import { MailError, smtpMailer } from "./mailer.ts";
import { inviteMail } from "./messages.ts";
import { REJECT_MESSAGE, startSmtpSink, type SmtpSink } from "./smtp-sink.ts";

let sink: SmtpSink;
const config = (port: number, user = "") => ({ host: "127.0.0.1", port, secure: false, user, password: user ? "pw" : "", from: "svc <svc@example.com>" });

beforeAll(() => {
  sink = startSmtpSink();
});
afterAll(() => sink.stop());

test("a mail arrives with its envelope, To, From, Subject and the link intact in the body", async () => {
  const url = `https://svc.example.com/ui/invite?token=svcul_${"A1b2".repeat(10)}xyz`;
  await smtpMailer(config(sink.port, "mailer")).send(inviteMail("ada@example.com", "ada", url, "2030-01-01T00:00:00.000Z"));
  const mail = sink.mails.at(-1)!;
  expect(mail.from).toBe("svc@example.com");
  expect(mail.to).toEqual(["ada@example.com"]);
  expect(mail.authUser).toBe("mailer");
  expect(mail.headers.to).toBe("ada@example.com");
  expect(mail.headers.from).toBe("svc <svc@example.com>");
  expect(mail.headers.subject).toBe("You are invited to svc");
  expect(mail.body.split(/\r?\n/)).toContain(url);
  expect(mail.body).toContain('"ada"');
});

test("without smtp.user the client does not log in", async () => {
  await smtpMailer(config(sink.port)).send({ to: "bo@example.com", subject: "s", text: "t" });
  expect(sink.mails.at(-1)!.authUser).toBeNull();
});

test("a refused recipient is 502 mail_failed with the server's reason", async () => {
  const sent = sink.mails.length;
  const error = await smtpMailer(config(sink.port))
    .send({ to: "reject@example.com", subject: "s", text: "t" })
    .catch((e: unknown) => e);
  expect(error).toBeInstanceOf(MailError);
  expect((error as MailError).status).toBe(502);
  expect((error as MailError).code).toBe("mail_failed");
  expect((error as MailError).message).toContain("reject@example.com");
  expect((error as MailError).message).toContain(REJECT_MESSAGE);
  expect(sink.mails.length).toBe(sent);
});

test("an unreachable server is 502 mail_failed", async () => {
  const error = await smtpMailer(config(freePort()))
    .send({ to: "x@example.com", subject: "s", text: "t" })
    .catch((e: unknown) => e);
  expect(error).toBeInstanceOf(MailError);
  expect((error as MailError).message).toContain("ECONNREFUSED");
});
