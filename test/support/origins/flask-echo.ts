// Starts flask_echo.py with Debian's python3-flask (/usr/bin/python3 first: a python3 earlier on
// the PATH, such as pyenv's, may not have Flask; AEGIS_PYTHON overrides).
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startChildOrigin } from './child-origin.ts';
import type { EchoOrigin } from './index.ts';

const HERE = fileURLToPath(new URL('.', import.meta.url));

/** A python3 that imports Flask, or the reason there is none. */
export function findFlaskPython(): { python: string } | { missing: string } {
  const candidates = [process.env.AEGIS_PYTHON, '/usr/bin/python3', 'python3'].filter((c): c is string => Boolean(c));
  for (const python of candidates) {
    try {
      execFileSync(python, ['-c', 'import flask, werkzeug'], { stdio: 'ignore', timeout: 30_000 });
      return { python };
    } catch {
      // not this one
    }
  }
  return { missing: `no python3 with Flask among ${candidates.join(', ')} (apt-get install python3-flask)` };
}

export function startFlaskEcho(python: string): Promise<EchoOrigin> {
  return startChildOrigin({
    framework: 'flask',
    command: python,
    args: ['-u', 'flask_echo.py'],
    cwd: HERE,
    ready: (output) => {
      const port = /^READY (\d+)$/m.exec(output)?.[1];
      return port === undefined ? null : Number(port);
    },
  });
}
