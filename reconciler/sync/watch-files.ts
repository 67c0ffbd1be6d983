// Watches a config directory for edits that matter and reports them debounced: an editor's save
// is often several events (write a temp file, rename it over, touch the backup), and a git
// checkout is many, but each burst should cost one reconcile pass.
import { basename, relative, resolve, sep } from 'node:path';
import { watch, type FSWatcher } from 'chokidar';

/** Config files, and the OpenAPI documents `document_file:` may name (YAML or JSON). */
const RELEVANT_FILE = /\.(ya?ml|json)$/i;

export interface FileWatch {
  /** True while edits have been seen but their quiet period has not passed. */
  debouncing(): boolean;
  close(): Promise<void>;
}

export interface FileWatchOptions {
  debounceMs: number;
  onChange: () => void;
  onError: (error: Error) => void;
}

/**
 * What the loader skips (reconciler/config/load.ts): dot-files and dot-directories (.git, editor
 * swap files like `.shop.yaml.swp`) and node_modules. Also the paths of other files: vim's `4913`
 * probe, `shop.yaml~` backups.
 */
function ignoredBelow(root: string): (path: string, stats?: { isFile(): boolean }) => boolean {
  return (path, stats) => {
    const rel = relative(root, resolve(path));
    if (rel.split(sep).some((part) => part.startsWith('.') || part === 'node_modules')) return true;
    return stats?.isFile() === true && !RELEVANT_FILE.test(basename(path));
  };
}

/** Resolves once the initial scan is done, so that no edit made after it is missed. */
export async function watchConfigFiles(path: string, options: FileWatchOptions): Promise<FileWatch> {
  const root = resolve(path);
  const ignored = ignoredBelow(root);
  let timer: NodeJS.Timeout | undefined;
  const changed = (): void => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      options.onChange();
    }, options.debounceMs);
  };
  // Links are not followed, like the loader, which does not read through them either.
  const watcher: FSWatcher = watch(root, { ignoreInitial: true, followSymlinks: false, ignored });
  watcher.on('all', (event, changedPath) => {
    // A deleted file comes without stats, so `ignored` cannot tell it from a directory: check here.
    if (event === 'addDir') return;
    if (event !== 'unlinkDir' && !RELEVANT_FILE.test(basename(changedPath))) return;
    if (ignored(changedPath)) return;
    changed();
  });
  watcher.on('error', (error) => options.onError(error instanceof Error ? error : new Error(String(error))));
  await new Promise<void>((done) => watcher.once('ready', () => done()));
  return {
    debouncing: () => timer !== undefined,
    async close() {
      clearTimeout(timer);
      timer = undefined;
      await watcher.close();
    },
  };
}
