// `aegis plan|apply --terraform-json`: CDKTF users reconcile without a Terraform binary.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAegis } from '../support/cli.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let t: TestServer;
let env: Record<string, string>;
beforeAll(async () => {
  t = await startTestServer({ rateLimitPerMinute: 1_000_000 });
  env = { AEGIS_API_URL: t.url, AEGIS_API_KEY: t.adminKey };
});
afterAll(() => t.close());

describe('aegis plan|apply --terraform-json', () => {
  it('reconciles the JSON that cdktf synth writes, resolving site references', async () => {
    const tf = 'test/fixtures/config/terraform/cdk.tf.json';
    const source = ['--source', 'cdktf-stack'];
    const first = await runAegis(['plan', '--terraform-json', tf, ...source], env);
    expect(first.code, first.stdout + first.stderr).toBe(2);
    expect(first.stdout).toContain('VirtualPatch shop/search-sqli');
    const applied = await runAegis(['apply', '--terraform-json', tf, ...source, '--yes'], env);
    expect(applied.code, applied.stdout + applied.stderr).toBe(0);
    const again = await runAegis(['plan', '--terraform-json', tf, ...source], env);
    expect(again.code, again.stdout).toBe(0);
    const blog = (await t.call('GET', '/api/v1/shield/sites?domain=blog.example.com')).body.data[0];
    expect(blog.labels['aegis.dev/source']).toBe('cdktf-stack');
    expect((await t.call('GET', `/api/v1/shield/sites/${blog.id}/virtual-patches`)).body.data.length).toBeGreaterThan(0);
  });
});
