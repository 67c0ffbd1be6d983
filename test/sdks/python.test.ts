// The Python SDK's own suite (sdks/python/tests, pytest) against a real server it starts itself.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { findTool, REQUIRE_SDK_TOOLS, runSuite } from '../support/sdk-suite.ts';

const SDK_DIR = fileURLToPath(new URL('../../sdks/python', import.meta.url));
// Debian's python3 has pytest; a python3 earlier on PATH (pyenv) may not.
const python = findTool([process.env.AEGIS_PYTHON ?? 'python3', '/usr/bin/python3'], ['-m', 'pytest', '--version']);
if (!python && REQUIRE_SDK_TOOLS) throw new Error('no python3 with pytest: apt-get install python3-pytest');

describe.skipIf(!python)('Python SDK', () => {
  it('passes its pytest suite against a real server', async () => {
    const run = await runSuite(python!, ['-m', 'pytest', 'tests', '-q', '-p', 'no:cacheprovider'], { cwd: SDK_DIR, timeoutMs: 540_000, env: { PYTHONDONTWRITEBYTECODE: '1' } });
    expect(run.code, run.output).toBe(0);
    // A suite that collected nothing would also exit non-zero (5), but say it plainly.
    expect(run.output).toMatch(/\d+ passed/);
  }, 600_000);
});
