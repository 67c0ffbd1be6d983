// The Go SDK's own suite (sdks/go, go test) against a real server it starts itself, after go vet
// and a gofmt check (generated files included: the generator writes gofmt's layout itself).
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { findTool, REQUIRE_SDK_TOOLS, runSuite } from '../support/sdk-suite.ts';

const SDK_DIR = fileURLToPath(new URL('../../sdks/go', import.meta.url));
const go = findTool([process.env.AEGIS_GO ?? 'go', '/usr/bin/go', '/usr/lib/go/bin/go'], ['version']);
if (!go && REQUIRE_SDK_TOOLS) throw new Error('no go toolchain: apt-get install golang-go');
const gofmt = go ? go.replace(/go$/, 'gofmt') : undefined;

describe.skipIf(!go)('Go SDK', () => {
  it('is gofmt-clean and vet-clean', async () => {
    const fmt = await runSuite(gofmt!, ['-l', '.'], { cwd: SDK_DIR, timeoutMs: 60_000 });
    expect(fmt.code, fmt.output).toBe(0);
    expect(fmt.output.trim(), 'files gofmt would change').toBe('');
    const vet = await runSuite(go!, ['vet', './...'], { cwd: SDK_DIR, timeoutMs: 300_000 });
    expect(vet.code, vet.output).toBe(0);
  }, 400_000);

  it('passes its go test suite against a real server', async () => {
    const run = await runSuite(go!, ['test', '-count=1', './...'], { cwd: SDK_DIR, timeoutMs: 540_000 });
    expect(run.code, run.output).toBe(0);
  }, 600_000);
});
