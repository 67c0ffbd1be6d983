// The top lists: the ten most frequent client IPs, paths, rules and ASNs among the stored events.
import type { ReactNode } from 'react';
import { Empty } from '../../../components/status.tsx';
import { RULE_LABEL, type Analytics } from './actions.ts';

type Top = Analytics['top'];

function TopTable<Row extends { count: number }>({ title, column, rows, cell, rowKey }: { title: string; column: string; rows: readonly Row[]; cell: (row: Row) => ReactNode; rowKey: (row: Row) => string }) {
  return (
    <section className="traffic-top" aria-label={title}>
      <h3>{title}</h3>
      {rows.length === 0 ? (
        <Empty>No events in this range.</Empty>
      ) : (
        <div className="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">{column}</th>
                <th scope="col" className="num">
                  Events
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => (
                <tr key={rowKey(row)}>
                  <td>{cell(row)}</td>
                  <td className="num">{row.count}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}


export function TopTables({ top }: { top: Top }) {
  return (
    <div className="traffic-tops">
      <TopTable title="Top IP addresses" column="Client IP" rows={top.client_ips} rowKey={(r) => r.client_ip} cell={(r) => <code>{r.client_ip}</code>} />
      <TopTable title="Top paths" column="Path" rows={top.paths} rowKey={(r) => r.path} cell={(r) => <code className="traffic-path">{r.path}</code>} />
      <TopTable
        title="Top rules"
        column="Rule"
        rows={top.rules}
        rowKey={(r) => `${r.rule_kind}/${r.rule_id ?? ''}`}
        cell={(r) => (
          <>
            {RULE_LABEL[r.rule_kind] ?? r.rule_kind} {r.rule_id && <code>{r.rule_id}</code>}
          </>
        )}
      />
      <TopTable title="Top networks (ASN)" column="ASN" rows={top.asns} rowKey={(r) => String(r.asn)} cell={(r) => <code>AS{r.asn}</code>} />
    </div>
  );
}
