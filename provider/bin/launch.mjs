// Starts a provider definition as a Terraform plugin. Plain JavaScript because it runs before any
// TypeScript loader. Terraform starts ~4 plugin processes per apply, so start-up time matters:
// the provider is bundled with esbuild into provider/.build/ (rebuilt when any input file changed
// since, checked by size and mtime) and the bundle is imported directly; AEGIS_PROVIDER_NO_BUNDLE=1
// (or a failed build) runs the sources through tsx instead.
//
// Which provider: AEGIS_PROVIDER_MODULE (a .ts file) and AEGIS_PROVIDER_EXPORT (a factory returning
// a ProviderDefinition); by default provider/main.ts's aegisProvider, or, until that exists, the
// echo test provider.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const MAGIC_COOKIE = 'd602bf8f470bc67ca7faa0386276bbdd4330efaf76d1a219cb4d6991ca9872b2';

const root = fileURLToPath(new URL('../../', import.meta.url));
const mainModule = join(root, 'provider/main.ts');
const usesMain = !process.env.AEGIS_PROVIDER_MODULE && existsSync(mainModule);
const entry = resolve(process.env.AEGIS_PROVIDER_MODULE ?? (usesMain ? mainModule : join(root, 'test/provider/fixtures/echo-provider.ts')));
const exportName = process.env.AEGIS_PROVIDER_EXPORT ?? (usesMain || process.env.AEGIS_PROVIDER_MODULE ? 'aegisProvider' : 'echoProvider');
const serveModule = join(root, 'provider/server/serve.ts');
const buildDir = join(root, 'provider/.build');

function fresh(metaFile) {
  try {
    const meta = JSON.parse(readFileSync(metaFile, 'utf8'));
    for (const [file, stamp] of Object.entries(meta.inputs)) {
      const stats = statSync(join(root, file));
      if (`${stats.size}:${stats.mtimeMs}` !== stamp) return false;
    }
    return true;
  } catch {
    return false;
  }
}

/** Builds (when stale) and returns the bundle's path. */
export async function ensureBundle() {
  const key = createHash('sha256').update(`${entry}\0${exportName}`).digest('hex').slice(0, 16);
  const bundle = join(buildDir, `provider-${key}.mjs`);
  const metaFile = join(buildDir, `provider-${key}.json`);
  if (existsSync(bundle) && fresh(metaFile)) return bundle;
  const { build } = await import('esbuild');
  mkdirSync(buildDir, { recursive: true });
  writeFileSync(join(buildDir, '.gitignore'), '*\n');
  const temporary = `${bundle}.${process.pid}.tmp`;
  const result = await build({
    stdin: {
      contents:
        `import { serveProvider } from ${JSON.stringify(serveModule)};\n` +
        `import { ${exportName} as factory } from ${JSON.stringify(entry)};\n` +
        'await serveProvider(factory());\n',
      resolveDir: root,
      sourcefile: '<terraform-provider-aegis>', // not a file: skipped in the freshness stamps
      loader: 'ts',
    },
    absWorkingDir: root,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // Our TypeScript is bundled (tsx's per-file transform and resolution were most of the cost:
    // ~450 ms to the handshake against ~170 ms bundled); packages stay in node_modules, where
    // native ones (re2) and file-relative ones keep working.
    packages: 'external',
    outfile: temporary,
    metafile: true,
    logLevel: 'silent',
  }).catch((error) => {
    rmSync(temporary, { force: true });
    throw error;
  });
  const inputs = {};
  for (const file of Object.keys(result.metafile.inputs)) {
    if (file.startsWith('<')) continue;
    const stats = statSync(join(root, file));
    inputs[file] = `${stats.size}:${stats.mtimeMs}`;
  }
  // Several plugin processes may build at once: each renames a complete file into place.
  renameSync(temporary, bundle);
  writeFileSync(`${metaFile}.${process.pid}.tmp`, JSON.stringify({ inputs }));
  renameSync(`${metaFile}.${process.pid}.tmp`, metaFile);
  return bundle;
}

async function runWithTsx() {
  const { register } = await import('tsx/esm/api');
  register();
  const provider = await import(pathToFileURL(entry).href);
  const { serveProvider } = await import(pathToFileURL(serveModule).href);
  await serveProvider(provider[exportName]());
}

/** The plugin's entry point (provider/bin/terraform-provider-aegis). */
export async function main() {
  // Checked again by serveProvider; here too so a mistaken direct run answers before any loading.
  if (process.env.TF_PLUGIN_MAGIC_COOKIE !== MAGIC_COOKIE) {
    process.stderr.write(
      'This binary is a plugin. These are not meant to be executed directly.\n' +
        'Please execute the program that consumes these plugins, which will load any plugins automatically\n' +
        '(the Aegis provider runs under Terraform: see `aegis provider install`).\n',
    );
    process.exit(1);
  }
  // stdout belongs to the go-plugin handshake: stray console output would corrupt it.
  console.log = console.info = console.debug = console.error;
  try {
    await launch();
  } catch (error) {
    process.stderr.write(`aegis provider: ${error instanceof Error ? error.stack : error}\n`);
    process.exit(1);
  }
}

async function launch() {
  if (process.env.AEGIS_PROVIDER_NO_BUNDLE) return runWithTsx();
  let bundle;
  try {
    bundle = await ensureBundle();
  } catch (error) {
    process.stderr.write(`aegis provider: bundling failed, running from sources (${error instanceof Error ? error.message : error})\n`);
    return runWithTsx();
  }
  await import(pathToFileURL(bundle).href);
}
