// Label → value pairs as a definition list (each pair in its own div, as HTML allows): an object's
// properties on its page. `grid` lays the pairs out as tiles instead of two columns.
import type { ReactNode } from 'react';

export function Facts({ items, layout = 'columns' }: { items: ReadonlyArray<[string, ReactNode]>; layout?: 'columns' | 'grid' }) {
  return (
    <dl className={layout === 'grid' ? 'facts facts-grid' : 'facts'}>
      {items.map(([label, value]) => (
        <div key={label}>
          <dt>{label}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}
