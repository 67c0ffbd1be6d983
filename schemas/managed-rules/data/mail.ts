// Mail command and header injection: line breaks followed by SMTP or IMAP commands, or by the
// headers that redirect a message, in values the application hands to a mail server or library
// (a contact form's subject, a "from" address). Level 1 reads protocol commands with their
// arguments and Bcc/Cc/To headers with an address; prose with a line that starts "To:" and no
// address passes.
import type { RuleDefinition } from '../types.ts';

const T = ['value', 'path', 'header', 'body'] as const;
/** IMAP commands that are no everyday word (`store`, `list`, `select` are left out). */
const IMAP = String.raw`(?:capability|fetch|login|logout|examine|lsub|uid|noop|authenticate|starttls|subscribe|expunge|idle)`;
/** IMAP commands named by everyday words, known by their arguments: a message range, flags, dated search keys, a quoted mailbox. */
const IMAP_WITH_ARGUMENTS =
  String.raw`(?:(?:uid\s+)?(?:copy|move)\s+[\d*]+[:,][\d:*,]*\s+"?[\w/.-]+"?\s*(?:\n|$)|(?:uid\s+)?store\s+[\d*][\d:*,]*\s+[+-]?flags(?:\.silent)?\s+\(\\|` +
  String.raw`search\s+(?:[a-z]+\s+){0,3}(?:since|before|on|sentsince|sentbefore)\s+\d{1,2}-[a-z]{3}-\d{4}|search\s+charset\s+[\w-]+\s+[a-z]|search\s+(?:text|body|from|subject)\s+"|` +
  String.raw`(?:list|lsub)\s+"[^"\n]*"\s+"|(?:select|examine|create|delete|rename|status|append)\s+"?inbox\b)`;

export const MAIL_RULES: readonly RuleDefinition[] = [
  {
    id: 'mail.smtp_command',
    category: 'mail',
    paranoia_level: 1,
    description: 'An SMTP command after a line break (\\r\\nRCPT TO: <…>, \\r\\nMAIL FROM:, a value starting with a line break and QUIT/DATA/HELO)',
    targets: T,
    pattern: String.raw`\n\s*(?:rcpt\s+to|mail\s+from)\s*:|^[/\s]*\n\s*(?:quit|data|rset|noop|helo|ehlo|vrfy|expn|starttls|auth\s+(?:login|plain))\b|\n\s*(?:helo|ehlo)\s+[a-z0-9.-]+\.[a-z]{2,}\s*(?:\n|$)`,
  },
  {
    id: 'mail.imap_command',
    category: 'mail',
    paranoia_level: 1,
    description: 'A tagged IMAP command after a line break (\\r\\nA1 FETCH 1:*, \\r\\nV100 CAPABILITY, \\r\\na002 COPY 2:4 MEETING, \\r\\nd STORE 2 +FLAGS, \\r\\nZ1 SEARCH FLAGGED SINCE …); a line "A1 list of items" passes',
    targets: T,
    pattern: String.raw`\n\s*[a-z]{1,4}\d{1,6}\s+${IMAP}\b|\n\s*[a-z0-9]{1,8}\s+${IMAP_WITH_ARGUMENTS}`,
  },
  {
    id: 'mail.header_injection',
    category: 'mail',
    paranoia_level: 1,
    description: 'A line break followed by a recipient header with an address (\\nBcc: victim@example.com, %0aCc:, %0aTo:)',
    targets: T,
    pattern: String.raw`\n\s*(?:bcc|cc|to|reply-to|from|sender|return-path)\s*:\s*[^\n]*@[a-z0-9-]+\.`,
  },
  {
    id: 'mail.message_header',
    category: 'mail',
    paranoia_level: 2,
    signal: { from: 1, severity: 'warning' },
    description: 'A line break followed by a message header (Subject:, MIME-Version:, Content-Transfer-Encoding:, X-Mailer:)',
    targets: T,
    pattern: String.raw`\n\s*(?:subject|mime-version|content-transfer-encoding|x-mailer|x-priority|message-id|in-reply-to|references)\s*:`,
  },
];
