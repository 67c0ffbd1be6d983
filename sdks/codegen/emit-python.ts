// Placeholder until the python emitter lands.
import type { SdkModel } from './model.ts';
import type { EmitterOutput } from './output.ts';

export function renderPython(_model: SdkModel): EmitterOutput {
  return { owns: [], files: [] };
}
