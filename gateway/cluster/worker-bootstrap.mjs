// Entry point of a gateway cluster worker (./primary.ts forks it). A forked process starts with a
// bare loader, so it registers tsx before loading TypeScript; the typed logic is ./worker-main.ts.
// In the dist/ bundle this file is replaced by the bundled worker (build/bundle.mjs THREAD_ENTRIES).
import { register } from 'tsx/esm/api';

register();
await import('./worker-main.ts');
