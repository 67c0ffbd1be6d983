// Types and query keys of the findings pages, from the generated API types.
import type { Answer, Item, QueryOf } from '../../api/types.ts';

export type Finding = Item<'/api/v1/vulnerabilities'>;
export type FindingQuery = QueryOf<'/api/v1/vulnerabilities'>;
export type Sort = NonNullable<FindingQuery['sort']>;
export type HistoryEntry = Item<'/api/v1/vulnerabilities/{id}/history'>;
export type Ticket = Answer<'/api/v1/vulnerabilities/{id}/ticket'>;

export const STATUSES = ['open', 'acknowledged', 'resolved', 'accepted_risk'] as const;
export const SCAN_TYPES = ['sast', 'sca', 'secrets', 'dast', 'api', 'cve'] as const satisfies ReadonlyArray<Finding['scan_type']>;

/** Every query of a finding starts with this, so a write can refresh them all. */
export const findingsKey = ['vulnerabilities'] as const;
export const findingKey = (id: string) => [...findingsKey, id] as const;
export const historyKey = (id: string) => [...findingsKey, id, 'history'] as const;

/** A URL finding (DAST, API, CVE) is located by a request, not a file. */
export const isUrlFinding = (f: Finding) => f.location.kind === 'url';
