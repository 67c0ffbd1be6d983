// A secret a config file names rather than holds: `{ env: NAME }` (an environment variable of the
// process running the reconciler) or `{ file: PATH }` (a file in the config repository, which the
// loader confines to it and makes absolute). Plans, their JSON and their checksums carry only the
// reference; the value is read when the write that needs it is sent, so it never lands in plan
// output. A plain string (Terraform JSON, the provider) is the value itself.
import { readFileSync } from 'node:fs';

export type SecretReference = { env: string } | { file: string };

/** Environment variable names as POSIX shells accept them. */
export const ENV_NAME_PATTERN = '^[A-Za-z_][A-Za-z0-9_]*$';

/** The JSON Schema of a reference, for config files (a plain string is refused there). */
export function secretReferenceSchema(description: string): Record<string, unknown> {
  return {
    description,
    oneOf: [
      {
        type: 'object',
        additionalProperties: false,
        required: ['env'],
        properties: { env: { type: 'string', pattern: ENV_NAME_PATTERN, description: 'Name of the environment variable holding the value.' } },
      },
      {
        type: 'object',
        additionalProperties: false,
        required: ['file'],
        properties: { file: { type: 'string', minLength: 1, maxLength: 1024, description: 'Path of the file holding the value, relative to this YAML file; it must stay inside the config directory.' } },
      },
    ],
  };
}

export function isSecretReference(value: unknown): value is SecretReference {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  if (keys.length !== 1) return false;
  const [key] = keys;
  return (key === 'env' || key === 'file') && typeof (value as Record<string, unknown>)[key] === 'string';
}

/** Why a reference cannot be read now, or null. For `file`, the path must already be absolute (the loader's). */
export function secretProblem(reference: SecretReference): string | null {
  if ('env' in reference) {
    const value = process.env[reference.env];
    return value === undefined || value.trim() === '' ? `environment variable ${reference.env} is not set` : null;
  }
  try {
    readFileSync(reference.file);
    return null;
  } catch (err) {
    return `${reference.file} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`;
  }
}

/** The secret itself: a plain string as is, a reference read now. Throws (without the value) when it cannot be read. */
export function revealSecret(value: unknown, field: string): string {
  if (typeof value === 'string') return value;
  if (!isSecretReference(value)) throw new Error(`${field}: expected the value or { env } / { file }`);
  const problem = secretProblem(value);
  if (problem) throw new Error(`${field}: ${problem}`);
  return 'env' in value ? process.env[value.env]! : readFileSync(value.file, 'utf8');
}
