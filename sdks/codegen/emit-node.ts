// Placeholder until the node emitter lands.
import type { SdkModel } from './model.ts';
import type { EmitterOutput } from './output.ts';

export function renderNode(_model: SdkModel): EmitterOutput {
  return { owns: [], files: [] };
}
