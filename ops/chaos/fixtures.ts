// What the cluster talks to, all on loopback: the origin behind the Shield site, the webhook
// receiver, and a git repository for secrets scans.
import { execFileSync } from 'node:child_process';
import { cpSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { join, resolve } from 'node:path';

export interface Listening {
  url: string;
  close(): Promise<void>;
}

const listen = (server: Server): Promise<string> =>
  new Promise((done) =>
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      done(`http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`);
    }),
  );

const closing = (server: Server) => (): Promise<void> =>
  new Promise((done) => {
    server.closeAllConnections();
    server.close(() => done());
  });

/** The site's origin: a small page for every path, at once. */
export async function startOrigin(): Promise<Listening> {
  const server = createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(`origin ${req.url}\n`);
  });
  server.keepAliveTimeout = 30_000;
  return { url: await listen(server), close: closing(server) };
}

export interface Delivery {
  eventId: string;
  type: string;
  at: number;
  status: number;
}

export interface Receiver extends Listening {
  deliveries: Delivery[];
}

const body = (req: IncomingMessage): Promise<string> =>
  new Promise((done, fail) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => done(Buffer.concat(chunks).toString('utf8')));
    req.on('error', fail);
  });

/**
 * The webhook endpoint. The first attempt of every fourth distinct event is answered 503, so that
 * retries are exercised on every run (deterministic in the order events arrive).
 */
export async function startReceiver(): Promise<Receiver> {
  const deliveries: Delivery[] = [];
  const seen = new Map<string, number>();
  const server = createServer((req, res) => {
    void body(req).then((text) => {
      let eventId = '';
      let type = '';
      try {
        const parsed = JSON.parse(text) as { id?: unknown; type?: unknown };
        eventId = typeof parsed.id === 'string' ? parsed.id : '';
        type = typeof parsed.type === 'string' ? parsed.type : '';
      } catch {
        // Not an event: answered 400 below and recorded as such.
      }
      if (!seen.has(eventId)) seen.set(eventId, seen.size);
      const nth = seen.get(eventId)!;
      const firstAttempt = !deliveries.some((d) => d.eventId === eventId);
      const status = !eventId ? 400 : firstAttempt && nth % 4 === 3 ? 503 : 200;
      deliveries.push({ eventId, type, at: Date.now(), status });
      res.writeHead(status, { 'content-type': 'text/plain' });
      res.end(status === 200 ? 'ok' : 'try again');
    });
  });
  return { url: await listen(server), close: closing(server), deliveries };
}

/** A git repository with known secrets in it (the scanners' fixture), committed. */
export function makeRepo(dir: string): string {
  const repo = join(dir, 'repo');
  cpSync(resolve('test/fixtures/scanners/secrets/repo'), repo, { recursive: true });
  const git = (...args: string[]) => execFileSync('git', ['-C', repo, '-c', 'user.name=Chaos', '-c', 'user.email=chaos@example.com', ...args], { stdio: 'pipe' });
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-q', '-m', 'initial');
  return repo;
}
