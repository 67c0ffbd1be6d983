#!/usr/bin/env node
// The `aegis` command. TypeScript sources run through tsx's loader, so there is no build step
// between a checkout and a running server.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
