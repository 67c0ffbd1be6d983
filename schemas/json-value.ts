// Reading parsed JSON/YAML of unknown shape, and turning a caught value into message text: the
// two helpers every reader of documents (OpenAPI, lockfiles, Terraform JSON, token payloads) had a
// copy of. Here, in the shared model, because schemas/ may import nothing else of ours and
// everything else may import schemas/. (Not named json.ts: schemas/json/ holds the exported JSON
// Schemas.)

export type JsonObject = Record<string, unknown>;

/** A plain object: not null, not an array. */
export const isObject = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);

/** An Error's message, anything else as text. */
export const errorMessage = (error: unknown): string => (error instanceof Error ? error.message : String(error));
