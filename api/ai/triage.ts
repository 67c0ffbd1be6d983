// One triage of one finding: the prompt (secrets redacted, ./prompt.ts) sent to the customer's
// model through its connection, the answer checked against the schema and asked for once more when
// malformed; or the bundled fallback's rules. Produces the StoredTriage the job writes; never
// changes the finding's status or resolution.
import type { IntegrationRow } from '../../platform/db/schema.ts';
import type { Db } from '../../platform/db/database.ts';
import type { ProviderConnector, ProviderName, ProviderSession } from '../integrations/providers/types.ts';
import { IntegrationUnavailableError, withProviderSession, type IntegrationDeps } from '../integrations/connections/sessions.ts';
import type { VulnerabilityRow } from '../findings/store.ts';
import { FALLBACK_MODEL, fallbackTriage } from './fallback/engine.ts';
import { buildTriagePrompt } from './prompt.ts';
import type { StoredTriage, TriageAnswer, TriageEngine, TriageFinding, TriageUsage } from './types.ts';
import { parseTriageAnswer, TRIAGE_SCHEMA } from './verdict.ts';

/** The output format's name (OpenAI `json_schema.name`, Anthropic tool name). */
export const TRIAGE_SCHEMA_NAME = 'triage_verdict';
/** Room for the explanation and a patch; a longer answer is cut off (and then malformed). */
export const MAX_OUTPUT_TOKENS = 2_000;
/** Model calls per triage: the first, and one retry of a malformed answer. */
export const MAX_MODEL_ATTEMPTS = 2;

/** The finding, org-scoped; undefined when it does not exist (in this organisation). */
export async function loadFinding(db: Db, orgId: string, id: string): Promise<VulnerabilityRow | undefined> {
  return db.selectFrom('vulnerabilities').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
}

/** What the prompt and the fallback read of a finding. */
export function toTriageFinding(row: VulnerabilityRow): TriageFinding {
  return {
    id: row.id,
    scan_type: row.scan_type,
    rule_id: row.rule_id,
    title: row.title,
    severity: row.severity,
    cwe: row.cwe,
    target: row.target,
    location: row.location as Record<string, unknown>,
    evidence: row.evidence,
    details: row.details as Record<string, unknown>,
  };
}

export type ModelOutcome =
  | { ok: true; answer: TriageAnswer; engine: TriageEngine; usage: TriageUsage; attempts: number; redactions: number }
  | { ok: false; error: string; engine: TriageEngine; usage: TriageUsage; attempts: number; redactions: number };

/** The retry's prompt: the original, and why the first answer was refused. */
export const retryPrompt = (user: string, reason: string): string =>
  `${user}\n\nYour previous answer was invalid: ${reason}; answer again with only the JSON object.`;

const providerOf = (name: string): TriageEngine['provider'] => (name === 'anthropic' ? 'anthropic' : 'openai');

/** The model a connection triages with: its setting, else the provider's default. */
export const modelOf = (integration: Pick<IntegrationRow, 'settings'>, connector: ProviderConnector | undefined): string | null =>
  integration.settings.ai?.model ?? connector?.ai?.defaultModel ?? null;

/** The engine a connection's triage runs on, before any answer names the model that replied. */
export function engineOf(deps: IntegrationDeps, integration: IntegrationRow): TriageEngine {
  const connector = deps.connectors[integration.provider as ProviderName];
  return { provider: providerOf(integration.provider), model: modelOf(integration, connector) ?? 'unknown', integration_id: integration.id };
}

async function converse(session: ProviderSession, connector: ProviderConnector, integration: IntegrationRow, finding: TriageFinding, signal: AbortSignal | undefined): Promise<ModelOutcome> {
  const ai = connector.ai;
  if (!ai) throw new IntegrationUnavailableError(`${connector.name} connections cannot triage findings`);
  const model = modelOf(integration, connector) ?? ai.defaultModel;
  const prompt = buildTriagePrompt(finding);
  const usage: TriageUsage = { input_tokens: 0, output_tokens: 0 };
  let engine: TriageEngine = { provider: providerOf(connector.name), model, integration_id: integration.id };
  let user = prompt.user;
  let reason = '';
  for (let attempt = 1; attempt <= MAX_MODEL_ATTEMPTS; attempt++) {
    const reply = await ai.complete(session, {
      model,
      system: prompt.system,
      user,
      schemaName: TRIAGE_SCHEMA_NAME,
      schema: TRIAGE_SCHEMA,
      maxOutputTokens: MAX_OUTPUT_TOKENS,
      ...(signal ? { signal } : {}),
    });
    usage.input_tokens += reply.usage.input_tokens;
    usage.output_tokens += reply.usage.output_tokens;
    engine = { ...engine, model: reply.model || model };
    const parsed = parseTriageAnswer(reply.text);
    if (parsed.ok) return { ok: true, answer: parsed.answer, engine, usage, attempts: attempt, redactions: prompt.redactions };
    reason = parsed.error;
    user = retryPrompt(prompt.user, reason);
  }
  return {
    ok: false,
    error: `the model's answer did not match the triage schema, twice (${reason})`,
    engine,
    usage,
    attempts: MAX_MODEL_ATTEMPTS,
    redactions: prompt.redactions,
  };
}

/**
 * Asks the connection's model. Provider failures are thrown as they come (ProviderAuthError marks
 * the connection `error`, see withProviderSession); a malformed answer is an outcome, not a throw.
 */
export async function askModel(deps: IntegrationDeps, integration: IntegrationRow, finding: TriageFinding, signal?: AbortSignal): Promise<ModelOutcome> {
  return withProviderSession(deps, integration, (session, connector) => converse(session, connector, integration, finding, signal));
}

/** The fallback's triage: rules, no network, no tokens. */
export function fallbackOutcome(finding: TriageFinding): { answer: TriageAnswer; engine: TriageEngine } {
  return { answer: fallbackTriage(finding), engine: { provider: 'fallback', model: FALLBACK_MODEL, integration_id: null } };
}

/** The pending triage, completed with an answer. */
export function completedTriage(pending: StoredTriage, done: { answer: TriageAnswer; engine: TriageEngine; usage?: TriageUsage; attempts?: number; redactions?: number }, now = new Date()): StoredTriage {
  return {
    ...pending,
    status: 'completed',
    completed_at: now.toISOString(),
    engine: done.engine,
    result: done.answer,
    usage: done.usage ?? { input_tokens: 0, output_tokens: 0 },
    attempts: done.attempts ?? 0,
    redactions: done.redactions ?? 0,
    error: null,
  };
}

/** The pending triage, failed with the reason (and what was spent getting there). */
export function failedTriage(pending: StoredTriage, error: string, spent: { engine?: TriageEngine | null; usage?: TriageUsage; attempts?: number; redactions?: number } = {}, now = new Date()): StoredTriage {
  return {
    ...pending,
    status: 'failed',
    completed_at: now.toISOString(),
    engine: spent.engine ?? pending.engine,
    result: null,
    usage: spent.usage ?? pending.usage,
    attempts: spent.attempts ?? pending.attempts,
    redactions: spent.redactions ?? pending.redactions,
    error,
  };
}

export const tokensOf = (usage: TriageUsage): number => usage.input_tokens + usage.output_tokens;
