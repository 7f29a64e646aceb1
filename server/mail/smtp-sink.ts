/**
 * For tests only: a loopback SMTP server that speaks just enough of the
 * protocol for nodemailer (greeting, EHLO/HELO, AUTH PLAIN, MAIL FROM,
 * RCPT TO, DATA, RSET, NOOP, QUIT) and keeps every message it accepts, decoded
 * (dot-stuffing and quoted-printable undone) so a test can read the link.
 * A recipient whose address starts with "reject" is refused with 550, the way
 * a real server refuses an unknown mailbox.
 */
export interface ReceivedMail {
  from: string;
  to: string[];
  /** The `user` of AUTH PLAIN, or null when the client did not log in. */
  authUser: string | null;
  /** Header names lower-cased; folded lines joined. */
  headers: Record<string, string>;
  body: string;
}

export interface SmtpSink {
  port: number;
  mails: ReceivedMail[];
  stop(): void;
}

export const REJECT_MESSAGE = "550 5.1.1 Mailbox unavailable: no such user here";

interface Conversation {
  buffer: string;
  inData: boolean;
  data: string[];
  from: string;
  to: string[];
  authUser: string | null;
}

function decodeQuotedPrintable(text: string): string {
  const soft = text.replace(/=\r?\n/g, "");
  const bytes: number[] = [];
  for (let i = 0; i < soft.length; i++) {
    const hex = soft[i] === "=" ? /^[0-9A-F]{2}/i.exec(soft.slice(i + 1, i + 3)) : null;
    if (hex) {
      bytes.push(parseInt(hex[0], 16));
      i += 2;
    } else bytes.push(...Buffer.from(soft[i]!, "utf8"));
  }
  return Buffer.from(bytes).toString("utf8");
}

function parseMessage(lines: string[], envelope: Omit<ReceivedMail, "headers" | "body">): ReceivedMail {
  const blank = lines.indexOf("");
  const headers: Record<string, string> = {};
  let last = "";
  for (const line of lines.slice(0, blank)) {
    if (/^\s/.test(line) && last !== "") headers[last] += " " + line.trim();
    else {
      const at = line.indexOf(":");
      last = line.slice(0, at).toLowerCase();
      headers[last] = line.slice(at + 1).trim();
    }
  }
  const raw = lines.slice(blank + 1).join("\r\n");
  const encoding = (headers["content-transfer-encoding"] ?? "").toLowerCase();
  const body = encoding === "quoted-printable" ? decodeQuotedPrintable(raw) : encoding === "base64" ? Buffer.from(raw, "base64").toString("utf8") : raw;
  return { ...envelope, headers, body };
}

export function startSmtpSink(): SmtpSink {
  const mails: ReceivedMail[] = [];
  const server = Bun.listen<Conversation>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open(socket) {
        socket.data = { buffer: "", inData: false, data: [], from: "", to: [], authUser: null };
        socket.write("220 sink.test ESMTP ready\r\n");
      },
      data(socket, chunk) {
        const state = socket.data;
        state.buffer += chunk.toString("utf8");
        let end: number;
        while ((end = state.buffer.indexOf("\r\n")) >= 0) {
          const line = state.buffer.slice(0, end);
          state.buffer = state.buffer.slice(end + 2);
          if (state.inData) {
            if (line === ".") {
              state.inData = false;
              mails.push(parseMessage(state.data, { from: state.from, to: state.to, authUser: state.authUser }));
              state.data = [];
              state.to = [];
              socket.write("250 2.0.0 Ok: queued\r\n");
            } else {
              state.data.push(line.startsWith("..") ? line.slice(1) : line);
            }
            continue;
          }
          const verb = line.split(" ")[0]!.toUpperCase();
          if (verb === "EHLO") socket.write("250-sink.test\r\n250-AUTH PLAIN\r\n250 8BITMIME\r\n");
          else if (verb === "HELO") socket.write("250 sink.test\r\n");
          else if (verb === "AUTH") {
            const [, , initial = ""] = line.split(" ");
            state.authUser = Buffer.from(initial, "base64").toString("utf8").split("\0")[1] ?? null;
            socket.write("235 2.7.0 Authentication successful\r\n");
          } else if (verb === "MAIL") {
            state.from = /<([^>]*)>/.exec(line)?.[1] ?? "";
            socket.write("250 2.1.0 Ok\r\n");
          } else if (verb === "RCPT") {
            const to = /<([^>]*)>/.exec(line)?.[1] ?? "";
            if (to.startsWith("reject")) socket.write(`${REJECT_MESSAGE}\r\n`);
            else {
              state.to.push(to);
              socket.write("250 2.1.5 Ok\r\n");
            }
          } else if (verb === "DATA") {
            state.inData = true;
            socket.write("354 End data with <CR><LF>.<CR><LF>\r\n");
          } else if (verb === "RSET" || verb === "NOOP") socket.write("250 2.0.0 Ok\r\n");
          else if (verb === "QUIT") {
            socket.write("221 2.0.0 Bye\r\n");
            socket.end();
          } else socket.write("502 5.5.2 Command not recognised\r\n");
        }
      },
    },
  });
  return { port: server.port, mails, stop: () => server.stop(true) };
}
