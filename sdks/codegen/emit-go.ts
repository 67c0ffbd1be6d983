// Placeholder until the go emitter lands.
import type { SdkModel } from './model.ts';
import type { EmitterOutput } from './output.ts';

export function renderGo(_model: SdkModel): EmitterOutput {
  return { owns: [], files: [] };
}
