// Checks a secret reference of a config file (`{ env: NAME }` / `{ file: PATH }`) when the file is
// loaded, so a missing variable or key file is a config problem at `validate`/`plan`, not a failed
// write halfway through `apply`. A file is confined to the config directory as `document_file`
// is (no absolute paths, no `..` or symlink escapes) and kept as its absolute path.
import { secretProblem, type SecretReference } from '../kinds/secret-reference.ts';
import { documentFileTarget, readDocumentFile } from './document-file.ts';

export type ResolvedSecret = { ok: true; reference: SecretReference } | { ok: false; reason: string };

export async function resolveSecretReference(reference: SecretReference, yamlFile: string, baseDir: string): Promise<ResolvedSecret> {
  if ('env' in reference) {
    const problem = secretProblem(reference);
    return problem ? { ok: false, reason: problem } : { ok: true, reference };
  }
  const target = documentFileTarget(reference.file, yamlFile, baseDir);
  if (!target.ok) return target;
  // Reads it through the same confinement checks; what it holds is checked by the API's schema next.
  const read = await readDocumentFile(reference.file, yamlFile, baseDir);
  return read.ok ? { ok: true, reference: { file: target.path } } : { ok: false, reason: read.reason };
}
