/**
 * Outgoing mail over SMTP (nodemailer), used only for invite and
 * password-reset links. Port 465-style implicit TLS with smtp.secure;
 * otherwise plain SMTP upgraded with STARTTLS whenever the server offers it.
 * A failed send is one typed error, 502 mail_failed, carrying the SMTP
 * server's own words, so the admin sees why (unknown recipient, auth refused).
 */
import nodemailer from "nodemailer";
import type { SmtpConfig } from "../config/load.ts";
import { AppError } from "../errors.ts";

export interface Mail {
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  send(mail: Mail): Promise<void>;
}

export class MailError extends AppError {
  constructor(to: string, reason: string) {
    super(502, "mail_failed", `The mail to ${to} could not be sent: ${reason}`);
  }
}

/** Bounds every stage, so a silent SMTP server fails the request instead of hanging it. */
const TIMEOUT_MS = 15_000;

export function smtpMailer(config: SmtpConfig): Mailer {
  const transport = nodemailer.createTransport({
    host: config.host,
    port: config.port,
    secure: config.secure,
    auth: config.user === "" ? undefined : { user: config.user, pass: config.password },
    connectionTimeout: TIMEOUT_MS,
    greetingTimeout: TIMEOUT_MS,
    socketTimeout: TIMEOUT_MS,
  });
  return {
    async send({ to, subject, text }) {
      try {
        await transport.sendMail({ from: config.from, to, subject, text });
      } catch (error) {
        throw new MailError(to, (error as Error).message);
      }
    },
  };
}
