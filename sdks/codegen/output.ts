// What an emitter produces: whole files, and the directories it alone writes (a file there that it
// no longer produces is stale and is removed by `npm run sdks:generate`).
export interface GeneratedFile {
  /** Relative to the repository root, with `/`. */
  path: string;
  content: string;
}

export interface EmitterOutput {
  /** Directories (relative to the repository root) whose every file is generated. */
  owns: string[];
  files: GeneratedFile[];
}
