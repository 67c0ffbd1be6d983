// What a finding shows of its problem: where it is, the evidence, the source → sink path of a code
// finding (details.path steps), the request and response of a URL finding (details.request /
// response), and the verify-fix and AI triage results.
import type { ReactNode } from 'react';
import { Time } from '../../components/badges.tsx';
import { Facts } from '../../components/facts.tsx';
import type { Finding } from './model.ts';

const text = (v: unknown): string | null => (typeof v === 'string' && v.length > 0 ? v : null);

interface Step {
  path: string;
  line: number;
  note: string;
}

function stepsOf(details: Record<string, unknown>): Step[] {
  const path = details.path;
  if (!Array.isArray(path)) return [];
  return path.flatMap((s: unknown) => {
    if (typeof s !== 'object' || s === null) return [];
    const step = s as Record<string, unknown>;
    return typeof step.path === 'string' ? [{ path: step.path, line: Number(step.line ?? 0), note: String(step.note ?? '') }] : [];
  });
}

export function Location({ finding }: { finding: Finding }) {
  const entries = Object.entries(finding.location).filter(([k]) => k !== 'kind');
  return (
    <section aria-labelledby="location-heading">
      <h2 id="location-heading">Location</h2>
      <Facts layout="grid" items={[['Kind', String(finding.location.kind ?? '—')], ...entries.map(([k, v]): [string, ReactNode] => [k.replace(/_/g, ' '), <code>{typeof v === 'string' ? v : JSON.stringify(v)}</code>])]} />
    </section>
  );
}

export function Evidence({ finding }: { finding: Finding }) {
  const details = finding.details;
  const steps = stepsOf(details);
  const source = details.source as Record<string, unknown> | string | undefined;
  const sink = details.sink as Record<string, unknown> | undefined;
  const request = text(details.request);
  const response = text(details.response);
  const affected = Array.isArray(details.affected_urls) ? (details.affected_urls as unknown[]).map(String) : [];
  return (
    <>
      {text(details.description) && <p>{text(details.description)}</p>}
      <section aria-labelledby="evidence-heading">
        <h2 id="evidence-heading">Evidence</h2>
        <pre tabIndex={0} aria-label="Evidence">{finding.evidence || '—'}</pre>
      </section>
      {(steps.length > 0 || sink) && (
        <section aria-labelledby="path-heading">
          <h2 id="path-heading">Source → sink</h2>
          {source !== undefined && (
            <p>
              <strong>Source:</strong> <code>{typeof source === 'string' ? source : (text(source.expression) ?? JSON.stringify(source))}</code>
              {typeof source === 'object' && source.line !== undefined && <> at line {String(source.line)}</>}
            </p>
          )}
          {steps.length > 0 && (
            <ol className="taint-path" aria-label="Path from source to sink">
              {steps.map((s, i) => (
                <li key={i}>
                  <code>{s.path}:{s.line}</code> {s.note}
                </li>
              ))}
            </ol>
          )}
          {sink && (
            <p>
              <strong>Sink:</strong> <code>{text(sink.expression) ?? ''}</code>
              {sink.line !== undefined && <> at line {String(sink.line)}</>}
            </p>
          )}
        </section>
      )}
      {(request || response) && (
        <section aria-labelledby="exchange-heading">
          <h2 id="exchange-heading">Request and response</h2>
          {request && (
            <>
              <h3>Request</h3>
              <pre tabIndex={0} aria-label="Request">{request}</pre>
            </>
          )}
          {response && (
            <>
              <h3>Response</h3>
              <pre tabIndex={0} aria-label="Response">{response}</pre>
            </>
          )}
          {affected.length > 0 && (
            <>
              <h3>Affected URLs ({String(details.affected_count ?? affected.length)})</h3>
              <ul>{affected.map((u) => <li key={u}><code>{u}</code></li>)}</ul>
            </>
          )}
        </section>
      )}
    </>
  );
}

export function Verification({ finding }: { finding: Finding }) {
  const v = finding.verification;
  if (!v) return null;
  return (
    <section aria-labelledby="verify-heading">
      <h2 id="verify-heading">Verify-fix</h2>
      <p>
        <span className="badge">{v.status.replace(/_/g, ' ')}</span> requested <Time at={v.requested_at} />
        {v.finished_at && <>, finished <Time at={v.finished_at} /></>}
      </p>
      {v.evidence && <pre tabIndex={0} aria-label="What the re-run saw">{v.evidence}</pre>}
      {v.error && <p className="error">{v.error}</p>}
    </section>
  );
}

export function TriageVerdict({ finding }: { finding: Finding }) {
  const t = finding.triage;
  if (!t) return null;
  return (
    <section aria-labelledby="triage-heading">
      <h2 id="triage-heading">AI triage</h2>
      <p>
        <span className="badge">{t.status}</span>
        {t.engine && <> by {t.engine.provider} ({t.engine.model})</>}, requested <Time at={t.requested_at} />
      </p>
      {t.result && (
        <>
          <p>
            Verdict: <strong>{t.result.verdict.replace(/_/g, ' ')}</strong> (confidence {Math.round(t.result.confidence * 100)}%)
          </p>
          <p>{t.result.explanation}</p>
          <p><strong>Suggested fix:</strong> {t.result.suggested_fix.summary}</p>
          {t.result.suggested_fix.patch && <pre tabIndex={0} aria-label="Suggested patch">{t.result.suggested_fix.patch}</pre>}
        </>
      )}
      {t.error && <p className="error">{t.error}</p>}
    </section>
  );
}
