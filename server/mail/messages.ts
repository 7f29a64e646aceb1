/**
 * The invite and password-reset mails: plain text, the link on a line of its
 * own (mail clients make it clickable and do not wrap it), and when it stops
 * working, so the reader knows to ask for a new one.
 */
import type { Mail } from "./mailer.ts";

export function inviteMail(to: string, username: string, url: string, expiresAt: string): Mail {
  return {
    to,
    subject: "You are invited to svc",
    text: [
      `You have been invited to svc as "${username}".`,
      "",
      "Open this link to choose your password and sign in:",
      "",
      url,
      "",
      `The link works once and expires at ${expiresAt}.`,
    ].join("\n"),
  };
}

export function resetMail(to: string, username: string, url: string, expiresAt: string): Mail {
  return {
    to,
    subject: "Reset your svc password",
    text: [
      `An admin has asked for a new password for your svc account "${username}".`,
      "",
      "Open this link to choose a new password and sign in:",
      "",
      url,
      "",
      `The link works once and expires at ${expiresAt}. Setting the password ends your other sessions.`,
    ].join("\n"),
  };
}
