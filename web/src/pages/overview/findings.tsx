// Open findings by severity and by age; each count links to the list it counts.
import { Link } from 'wouter';
import { SEVERITIES } from '../../components/badges.tsx';
import type { Overview } from './index.tsx';

type Findings = NonNullable<Overview['findings']>;

/** The list of open findings (the overview's definition) with more filters. */
const OPEN = 'status=open,acknowledged&false_positive=false';

const AGES = [
  ['under_7_days', 'Under 7 days'],
  ['days_7_to_30', '7–30 days'],
  ['days_30_to_90', '30–90 days'],
  ['over_90_days', 'Over 90 days'],
] as const;

export function FindingCards({ findings }: { findings: Findings }) {
  const max = Math.max(1, ...AGES.map(([k]) => findings.by_age[k]));
  return (
    <section aria-labelledby="open-findings-heading">
      <h2 id="open-findings-heading">
        Open findings: <Link href={`/findings?${OPEN}`} data-testid="open-total">{findings.open}</Link>
      </h2>
      <ul className="cards severity-cards" aria-label="Open findings by severity">
        {SEVERITIES.map((s) => (
          <li key={s} className="card">
            <Link href={`/findings?${OPEN}&severity=${s}`} className="stat-link" data-testid={`open-${s}`}>
              <span className={`stat severity-${s}`}>{findings.by_severity[s]}</span>
              <span className="stat-label">{s}</span>
            </Link>
          </li>
        ))}
      </ul>
      <h3>By age (since first seen)</h3>
      <table className="age-table">
        <caption className="visually-hidden">Open findings by age</caption>
        <tbody>
          {AGES.map(([key, label]) => (
            <tr key={key}>
              <th scope="row">{label}</th>
              <td className="num" data-testid={`age-${key}`}>{findings.by_age[key]}</td>
              <td className="age-bar-cell" aria-hidden="true">
                <span className="age-bar" style={{ width: `${(findings.by_age[key] / max) * 100}%` }} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
