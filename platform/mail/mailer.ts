// Outgoing mail (sign-in links, invites). With SMTP_URL, nodemailer sends it over SMTP. Without
// one — the embedded quick start — each message is written to the server log and appended to
// <data-dir>/outbox.log (mode 0600), so a new user can sign in with no mail server. That is the one
// place sign-in links are ever written down, by design; start-up says so.
import { appendFile, chmod, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import nodemailer from 'nodemailer';

export interface Mail {
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  /** Where mail goes, for the start-up banner. */
  readonly destination: string;
  send(mail: Mail): Promise<void>;
  close(): void;
}

export interface MailerOptions {
  smtpUrl: string | undefined;
  from: string;
  dataDir: string;
  log: FastifyBaseLogger;
}

export function createMailer(options: MailerOptions): Mailer {
  return options.smtpUrl ? smtpMailer(options.smtpUrl, options.from) : outboxMailer(options);
}

function smtpMailer(smtpUrl: string, from: string): Mailer {
  // Pooled: a connection is reused for the next message instead of a new SMTP handshake each time.
  const transport = nodemailer.createTransport(smtpUrl.includes('?') ? `${smtpUrl}&pool=true` : `${smtpUrl}?pool=true`);
  const url = new URL(smtpUrl);
  return {
    destination: `SMTP ${url.hostname}:${url.port || (url.protocol === 'smtps:' ? 465 : 587)}`,
    async send(mail) {
      await transport.sendMail({ from, to: mail.to, subject: mail.subject, text: mail.text });
    },
    close: () => transport.close(),
  };
}

function outboxMailer({ dataDir, from, log }: MailerOptions): Mailer {
  const path = join(dataDir, 'outbox.log');
  return {
    destination: `the server log and ${path} (no SMTP_URL)`,
    async send(mail) {
      log.warn({ mail: { to: mail.to, subject: mail.subject } }, `mail (no SMTP_URL set, so it is written here instead of sent):\n${mail.text}`);
      await mkdir(dataDir, { recursive: true });
      const entry = `From: ${from}\nTo: ${mail.to}\nDate: ${new Date().toUTCString()}\nSubject: ${mail.subject}\n\n${mail.text}\n\n`;
      await appendFile(path, entry, { mode: 0o600 });
      await chmod(path, 0o600); // the mode applies only when the file is created
    },
    close: () => undefined,
  };
}
