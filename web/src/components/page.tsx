import { useEffect, type ReactNode } from 'react';
import { Link } from 'wouter';
import { useBrowserLocation } from 'wouter/use-browser-location';

/** A page's heading (one h1 per page) and its actions; sets the document title. */
export function PageHeader({ title, actions, children }: { title: string; actions?: ReactNode; children?: ReactNode }) {
  useEffect(() => {
    document.title = `${title} · Aegis`;
  }, [title]);
  return (
    <div className="page-header">
      <div>
        <h1>{title}</h1>
        {children}
      </div>
      {actions && <div className="actions">{actions}</div>}
    </div>
  );
}

/**
 * Tabs between the sub-pages of a section: links (each sub-page has its own URL) given as absolute
 * paths (`/settings/keys`), whatever route nests them.
 */
export function SubNav({ label, items }: { label: string; items: ReadonlyArray<{ href: string; label: string }> }) {
  const [current] = useBrowserLocation();
  return (
    <nav aria-label={label} className="subnav">
      <ul>
        {items.map((item) => (
          <li key={item.href}>
            <Link href={`~${item.href}`} aria-current={current === item.href || current.startsWith(`${item.href}/`) ? 'page' : undefined}>
              {item.label}
            </Link>
          </li>
        ))}
      </ul>
    </nav>
  );
}
