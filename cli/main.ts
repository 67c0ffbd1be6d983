// `aegis <command>`: the command tree is cli/program.ts (commander); this is the entry point that
// bin/aegis.mjs calls, from the build in dist/ or from these sources. Resolves to the exit code.
import { buildProgram } from './program.ts';

export async function main(argv: string[]): Promise<number> {
  // `aegis --help | head`: a reader that stops early is no failure of the command. The command
  // carries on (an apply finishes what it started) and keeps its exit code; only output is lost.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
  });
  return buildProgram().run(argv);
}
