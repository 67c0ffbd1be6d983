// Entry point of a job thread (./thread-runner.ts). A worker thread starts with a bare loader, so it
// registers tsx itself before loading TypeScript; the typed logic lives in ./thread-entry.ts.
import { register } from 'tsx/esm/api';

register();
await import('./thread-entry.ts');
