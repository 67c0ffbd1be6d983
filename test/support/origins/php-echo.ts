// Starts PHP's built-in server (Debian's php-cli) with php-echo.php as its router, on a free port:
// `php -S 127.0.0.1:0` prints the port it bound once it listens.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startChildOrigin } from './child-origin.ts';
import type { EchoOrigin } from './index.ts';

const HERE = fileURLToPath(new URL('.', import.meta.url));

export function findPhp(): { php: string } | { missing: string } {
  const php = process.env.AEGIS_PHP ?? 'php';
  try {
    execFileSync(php, ['-r', 'exit(0);'], { stdio: 'ignore', timeout: 30_000 });
    return { php };
  } catch {
    return { missing: `no ${php} on the PATH (apt-get install php-cli)` };
  }
}

export function startPhpEcho(php: string): Promise<EchoOrigin> {
  return startChildOrigin({
    framework: 'php',
    command: php,
    // Warnings go to the server's log, not into the JSON answer.
    args: ['-d', 'display_errors=stderr', '-d', 'html_errors=0', '-S', '127.0.0.1:0', 'php-echo.php'],
    cwd: HERE,
    ready: (output) => {
      const port = /Development Server \(http:\/\/127\.0\.0\.1:(\d+)\) started/.exec(output)?.[1];
      return port === undefined ? null : Number(port);
    },
  });
}
