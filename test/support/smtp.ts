// A real SMTP server on 127.0.0.1 (smtp-server, nodemailer's sibling) that keeps what it is sent,
// so tests read sign-in links and invites out of real mail.
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface CapturedMail {
  to: string[];
  subject: string;
  text: string;
  receivedAt: number;
}

export interface SmtpCapture {
  url: string;
  messages: CapturedMail[];
  /** The first message to `to` (after `since`, epoch ms) matching `test`, waiting for it. */
  waitFor(to: string, test?: (mail: CapturedMail) => boolean, since?: number): Promise<CapturedMail>;
  close(): Promise<void>;
}

/** Undoes quoted-printable (nodemailer uses it for long lines such as links). */
function decodeQuotedPrintable(body: string): string {
  return body.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

function parse(raw: string, to: string[]): CapturedMail {
  const split = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, split).replace(/\r\n[ \t]+/g, ' ');
  const body = raw.slice(split + 4);
  const header = (name: string) => new RegExp(`^${name}:\\s*(.*)$`, 'im').exec(head)?.[1]?.trim() ?? '';
  const text = /quoted-printable/i.test(header('Content-Transfer-Encoding')) ? decodeQuotedPrintable(body) : body;
  return { to, subject: header('Subject'), text: text.replace(/\r\n/g, '\n'), receivedAt: Date.now() };
}

export async function startSmtpServer(): Promise<SmtpCapture> {
  const messages: CapturedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    // A sender that keeps its connection open must not hold close() for smtp-server's default 30 s.
    closeTimeout: 1_000,
    onData(stream, session, done) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        messages.push(parse(Buffer.concat(chunks).toString('utf8'), session.envelope.rcptTo.map((r) => r.address.toLowerCase())));
        done();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    async waitFor(to, test = () => true, since = 0) {
      const deadline = Date.now() + 10_000;
      for (;;) {
        const found = messages.find((m) => m.receivedAt >= since && m.to.includes(to.toLowerCase()) && test(m));
        if (found) return found;
        if (Date.now() > deadline) throw new Error(`no mail to ${to} within 10 s (got ${messages.length} messages)`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The first link in a mail that starts with `prefix` (e.g. `${url}/auth/magic`). */
export function linkIn(mail: CapturedMail, prefix: string): string {
  const escaped = prefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const match = new RegExp(`${escaped}\\S*`).exec(mail.text);
  if (!match) throw new Error(`no link starting ${prefix} in:\n${mail.text}`);
  return match[0];
}
