// The server runs a worker and the scheduler in its own process (so the embedded database needs
// no second process), unless AEGIS_WORKER=false.
import { afterEach, describe, expect, it } from 'vitest';
import { enqueue, getJob } from '../../platform/jobs/queue.ts';
import { registerJobKind, registerJobKindFactory } from '../../platform/jobs/registry.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { until } from './support.ts';

registerJobKind<{ word: string }, string>('test.shout', {
  async run(job) {
    return job.payload.word.toUpperCase();
  },
});

// Built per server: the handler reads its job through the database of the server that runs it.
registerJobKindFactory<Record<string, never>, string | null>('test.whoami', ({ db }) => ({
  async run(job) {
    return (await getJob(db, job.id))?.lease_owner ?? null;
  },
}));

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  delete process.env.AEGIS_WORKER;
});

describe('jobs in the server process', () => {
  it('runs registered kinds; their log lines go to the server log', async () => {
    server = await startTestServer();
    const db = server.server.database.db;
    const { job } = await enqueue(db, { kind: 'test.shout', payload: { word: 'hello' } });
    const done = await until(async () => {
      const row = await getJob(db, job.id);
      return row?.state === 'completed' ? row : undefined;
    });
    expect(done.result).toBe('HELLO');
    await until(() => server!.logs.some((line) => line.includes(job.id) && line.includes('jobs: completed')) || undefined);

    const whoami = (await enqueue(db, { kind: 'test.whoami' })).job;
    const answered = await until(async () => {
      const row = await getJob(db, whoami.id);
      return row?.state === 'completed' ? row : undefined;
    });
    expect(answered.result).toBe(answered.lease_owner);
  });

  it('runs none with AEGIS_WORKER=false', async () => {
    process.env.AEGIS_WORKER = 'false';
    server = await startTestServer();
    const db = server.server.database.db;
    const { job } = await enqueue(db, { kind: 'test.shout', payload: { word: 'quiet' } });
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect((await getJob(db, job.id))?.state).toBe('queued');
  });
});
