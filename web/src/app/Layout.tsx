// Navigation (a list of links, keyboard reachable, the current one marked with aria-current),
// the organisation and environment, and sign-out. At narrow widths the navigation folds into a
// disclosure button.
import { useQueryClient } from '@tanstack/react-query';
import { useState, type ReactNode } from 'react';
import { Link, useLocation } from 'wouter';
import { send } from '../api/client.ts';
import type { Me } from '../api/session.ts';
import { prefetchSection, type Section } from './sections.ts';

const SECTIONS: ReadonlyArray<{ href: string; label: string; section?: Section }> = [
  { href: '/', label: 'Overview' },
  { href: '/findings', label: 'Findings', section: 'findings' },
  { href: '/scans', label: 'Scans', section: 'scans' },
  { href: '/shield', label: 'Shield', section: 'shield' },
  { href: '/config', label: 'Config as code', section: 'config' },
  { href: '/settings', label: 'Settings', section: 'settings' },
];

const isCurrent = (location: string, href: string) => (href === '/' ? location === '/' : location === href || location.startsWith(`${href}/`));

export function Layout({ me, children }: { me: Me; children: ReactNode }) {
  const [location] = useLocation();
  const [open, setOpen] = useState(false);
  const queries = useQueryClient();
  const signOut = async () => {
    await send('/auth/logout', { method: 'POST' }).catch(() => undefined);
    queries.clear();
    window.location.assign('/sign-in');
  };
  return (
    <div className="shell">
      <a className="skip-link" href="#main">Skip to content</a>
      <header className="topbar">
        <Link href="/" className="brand">Aegis</Link>
        <button type="button" className="nav-toggle" aria-expanded={open} aria-controls="primary-nav" onClick={() => setOpen(!open)}>
          Menu
        </button>
        <span className="org" title="Organisation">
          {me.organization.name}
          {!me.livemode && <span className="badge badge-test">test mode</span>}
        </span>
        <span className="who">{me.user?.email ?? me.api_key?.name}</span>
        <button type="button" className="button-quiet" onClick={signOut}>Sign out</button>
      </header>
      <nav id="primary-nav" aria-label="Main" className={open ? 'nav nav-open' : 'nav'}>
        <ul>
          {SECTIONS.map((s) => (
            <li key={s.href}>
              <Link
                href={s.href}
                aria-current={isCurrent(location, s.href) ? 'page' : undefined}
                onClick={() => setOpen(false)}
                onPointerEnter={() => s.section && prefetchSection(s.section)}
                onFocus={() => s.section && prefetchSection(s.section)}
              >
                {s.label}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" tabIndex={-1} className="content">
        {children}
      </main>
    </div>
  );
}
