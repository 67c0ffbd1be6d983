// Contract types (framework/contract.ts) to protocol messages: schemas, diagnostics, attribute paths.
import type { AttributePath, AttributeSchema, BlockSchema, Diagnostic, NestingMode } from '../framework/contract.ts';
import type { AttributeMessage, AttributePathMessage, AttributePathStep, BlockMessage, DiagnosticMessage, ObjectNestingMode, SchemaMessage } from '../protocol/messages.ts';
import { blockType, ValueError, type ValueType } from '../values/types.ts';
import { errorMessage } from '../../schemas/json-value.ts';

const MARKDOWN = 1;

const NESTING: Record<NestingMode, ObjectNestingMode> = { single: 1, list: 2 };

/**
 * One attribute: a plain one carries its type as JSON text; a nested one carries `nested_type`
 * (its object's attributes, recursively) and no `type` at all — an empty `type` would be sent as a
 * present but empty field, which Terraform tries to parse as JSON.
 */
export function attributeMessage(attribute: AttributeSchema): AttributeMessage {
  const flags = {
    description: attribute.description,
    description_kind: MARKDOWN,
    required: attribute.required ?? false,
    optional: attribute.optional ?? false,
    computed: attribute.computed ?? false,
    sensitive: attribute.sensitive ?? false,
    write_only: attribute.writeOnly ?? false,
  } as const;
  if (attribute.nested) {
    return { name: attribute.name, nested_type: { attributes: attribute.nested.attributes.map(attributeMessage), nesting: NESTING[attribute.nested.nesting] }, ...flags };
  }
  return { name: attribute.name, type: Buffer.from(JSON.stringify(attribute.type)), ...flags };
}

export function blockMessage(block: BlockSchema): BlockMessage {
  return {
    version: 0,
    description: block.description,
    description_kind: MARKDOWN,
    block_types: [],
    attributes: block.attributes.map(attributeMessage),
  };
}

export function schemaMessage(block: BlockSchema, version = 0): SchemaMessage {
  return { version, block: blockMessage(block) };
}

/**
 * String steps are attribute names inside objects and keys inside maps; walking the block's type
 * tells which, so Terraform can aim the message at `tags["team"]` rather than `tags.team`.
 */
export function attributePathMessage(path: AttributePath, block: BlockSchema | undefined): AttributePathMessage {
  let type: ValueType | undefined = block ? blockType(block) : undefined;
  const steps: AttributePathStep[] = [];
  for (const step of path) {
    const collection = type === undefined || typeof type === 'string' ? undefined : type;
    if (typeof step === 'number') {
      steps.push({ element_key_int: step });
      type = collection?.[0] === 'list' || collection?.[0] === 'set' ? collection[1] : collection?.[0] === 'tuple' ? collection[1][step] : undefined;
    } else if (collection?.[0] === 'map') {
      steps.push({ element_key_string: step });
      type = collection[1];
    } else {
      steps.push({ attribute_name: step });
      type = collection?.[0] === 'object' ? collection[1][step] : undefined;
    }
  }
  return { steps };
}

export function diagnosticMessage(diagnostic: Diagnostic, block?: BlockSchema): DiagnosticMessage {
  return {
    severity: diagnostic.severity === 'error' ? 1 : 2,
    summary: diagnostic.summary,
    ...(diagnostic.detail ? { detail: diagnostic.detail } : {}),
    ...(diagnostic.attribute?.length ? { attribute: attributePathMessage(diagnostic.attribute, block) } : {}),
  };
}

/** An exception from a handler or a codec, as an error diagnostic (never a crashed plugin). */
export function errorDiagnostic(summary: string, error: unknown, block?: BlockSchema): DiagnosticMessage {
  const detail = errorMessage(error);
  const attribute = error instanceof ValueError && error.path.length ? { attribute: attributePathMessage(error.path, block) } : {};
  return { severity: 1, summary, detail, ...attribute };
}

export function hasErrors(diagnostics: readonly Diagnostic[]): boolean {
  return diagnostics.some((d) => d.severity === 'error');
}
