// The echo origins of the parser-differential harness (test/gateway/parser-differential.test.ts):
// one real framework each, answering what it parsed (parsed-view.ts). Express runs in process;
// Flask and PHP are Debian packages run as child processes. A missing one is reported with the
// reason, and the test skips it — unless AEGIS_REQUIRE_PARSER_ORIGINS=1 (.ci/run sets it after
// installing them), where a missing framework is an error.
import { startExpressEcho } from './express-echo.ts';
import { findFlaskPython, startFlaskEcho } from './flask-echo.ts';
import { findPhp, startPhpEcho } from './php-echo.ts';

export interface EchoOrigin {
  framework: string;
  url: string;
  close(): Promise<void>;
}

export interface EchoOriginFactory {
  framework: string;
  /** Why the framework cannot run here, or null. */
  missing: string | null;
  start(): Promise<EchoOrigin>;
}

export const REQUIRE_PARSER_ORIGINS = process.env.AEGIS_REQUIRE_PARSER_ORIGINS === '1';

export function echoOriginFactories(): EchoOriginFactory[] {
  const flask = findFlaskPython();
  const php = findPhp();
  return [
    { framework: 'express', missing: null, start: startExpressEcho },
    { framework: 'flask', missing: 'missing' in flask ? flask.missing : null, start: () => startFlaskEcho('python' in flask ? flask.python : '') },
    { framework: 'php', missing: 'missing' in php ? php.missing : null, start: () => startPhpEcho('php' in php ? php.php : '') },
  ];
}
