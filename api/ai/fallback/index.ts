// Aegis's bundled triage engine (issue 25 item 3): deterministic rules per weakness family and
// scanner evidence, no network and no model. Its answers say so ("Aegis rules (no AI model):").
export { FALLBACK_MODEL, fallbackTriage, decide, familyOf, DECISION_THRESHOLD } from './engine.ts';
export { FAMILIES, familyFor, type Family } from './rules.ts';
export { LABEL as FALLBACK_LABEL, MAX_EXPLANATION } from './text.ts';
