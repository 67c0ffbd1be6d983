// Sends every request to every target over HTTP/1.1 keep-alive (undici), a fixed number in flight
// per target, all targets at once, and keeps what each answered. The sending runs in a worker
// thread (send-worker.ts): the gateway under test runs in the main thread, and would otherwise
// share its event loop with the client.
import { Worker } from 'node:worker_threads';
import { Pool } from 'undici';
import { ORIGIN_HEADER } from './origin.ts';
import type { Target } from './targets.ts';
import type { EvalRequest } from './types.ts';

/** What one target answered to each request, by request index. */
export interface TargetAnswers {
  /** HTTP status; 0 when no answer came (connection error, timeout). */
  status: Uint16Array;
  /** 1 when the origin wrote the answer (the request got through), else 0. */
  fromOrigin: Uint8Array;
  /** The gateway's X-Request-Id of answers the target wrote itself (gateway targets only). */
  requestIds: Map<number, string>;
  /** The first few errors, for the report. */
  errors: string[];
}

/** What the worker is given, and what it posts back. */
export interface SendJob {
  targets: Target[];
  requests: EvalRequest[];
  concurrency: number;
}
export type SendMessage = { progress: Record<string, number> } | { answers: [string, TargetAnswers][] };

/**
 * undici sends header values as Latin-1; a payload with characters past U+00FF goes out as its
 * UTF-8 bytes, as gotestwaf's Go client sends it.
 */
const wireValue = (value: string): string => (/[^\x00-\xff]/.test(value) ? Buffer.from(value, 'utf8').toString('latin1') : value);

async function sendOne(pool: Pool, target: Target, req: EvalRequest): Promise<{ status: number; fromOrigin: boolean; requestId: string | undefined }> {
  const headers: Record<string, string> = { host: target.host };
  for (const [name, value] of Object.entries(req.headers)) if (name !== 'host' && name !== 'content-length') headers[name] = wireValue(value);
  const res = await pool.request({ method: req.method, path: req.target, headers, body: req.body ?? null });
  await res.body.dump({ limit: 1 << 20 });
  const requestId = res.headers['x-request-id'];
  return { status: res.statusCode, fromOrigin: res.headers[ORIGIN_HEADER] === '1', requestId: typeof requestId === 'string' ? requestId : undefined };
}

async function sendAll(target: Target, requests: readonly EvalRequest[], concurrency: number, done: () => void): Promise<TargetAnswers> {
  const answers: TargetAnswers = { status: new Uint16Array(requests.length), fromOrigin: new Uint8Array(requests.length), requestIds: new Map(), errors: [] };
  const pool = new Pool(target.base, { connections: concurrency, pipelining: 1, headersTimeout: 30_000, bodyTimeout: 30_000, keepAliveTimeout: 30_000 });
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < requests.length; i = next++) {
      const req = requests[i]!;
      // One retry: a kept-alive connection the server closed at the wrong moment is not an answer.
      for (let attempt = 0; attempt < 2; attempt++) {
        try {
          const answer = await sendOne(pool, target, req);
          answers.status[i] = answer.status;
          answers.fromOrigin[i] = answer.fromOrigin ? 1 : 0;
          if (target.gateway && !answer.fromOrigin && answer.requestId) answers.requestIds.set(i, answer.requestId);
          break;
        } catch (err) {
          if (attempt === 1 && answers.errors.length < 5) answers.errors.push(`${req.method} ${req.target.slice(0, 80)}: ${(err as Error).message}`);
        }
      }
      done();
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  await pool.close();
  return answers;
}

/** The sending itself, in whichever thread calls it; `progress` hears how many each target has had. */
export async function sendHere(job: SendJob, progress: (counts: Record<string, number>) => void): Promise<[string, TargetAnswers][]> {
  const counts: Record<string, number> = Object.fromEntries(job.targets.map((t) => [t.label, 0]));
  const timer = setInterval(() => progress({ ...counts }), 1000);
  try {
    const results = await Promise.all(job.targets.map((target) => sendAll(target, job.requests, job.concurrency, () => void counts[target.label]!++)));
    return job.targets.map((target, i) => [target.label, results[i]!]);
  } finally {
    clearInterval(timer);
  }
}

/** Every request to every target, from a worker thread; prints progress to stderr every 15 s. */
export async function sendToAll(targets: Target[], requests: EvalRequest[], concurrency: number): Promise<Map<string, TargetAnswers>> {
  // The worker runs TypeScript as this process does: tsx's loader, registered in the worker first.
  const entry = new URL('./send-worker.ts', import.meta.url).href;
  const boot = `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then(({ register }) => { register(); return import(${JSON.stringify(entry)}); })`;
  const job: SendJob = { targets, requests, concurrency };
  const worker = new Worker(boot, { eval: true, workerData: job });
  const started = performance.now();
  let latest: Record<string, number> = {};
  const timer = setInterval(() => {
    const seconds = ((performance.now() - started) / 1000).toFixed(0);
    console.error(`  ${seconds} s: ${Object.entries(latest).map(([label, n]) => `${label} ${n}/${requests.length}`).join('  ')}`);
  }, 15_000);
  try {
    return await new Promise<Map<string, TargetAnswers>>((resolve, reject) => {
      worker.on('message', (message: SendMessage) => {
        if ('progress' in message) latest = message.progress;
        else resolve(new Map(message.answers));
      });
      worker.once('error', reject);
      worker.once('exit', (code) => reject(new Error(`the sending worker exited (${code}) before it answered`)));
    });
  } finally {
    clearInterval(timer);
    await worker.terminate();
  }
}
