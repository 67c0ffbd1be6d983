// The lazily loaded sections: one chunk each. A chunk is fetched on first visit, when the pointer
// or the keyboard reaches the section's link (`prefetchSection`), and at start-up for the section
// the address names (`preloadSectionOf`, alongside the session probe). A section whose code has arrived
// renders at once; only one still loading suspends — React then shows the fallback and holds the
// reveal back by up to 300 ms, which is what loading ahead avoids.
import { createElement, lazy, type ComponentType } from 'react';

interface SectionModule {
  default: ComponentType;
}

function section(loader: () => Promise<SectionModule>) {
  let loaded: ComponentType | undefined;
  let loading: Promise<void> | undefined;
  const load = () => (loading ??= loader().then((module) => void (loaded = module.default)));
  const Lazy = lazy(() => load().then(() => ({ default: loaded! })));
  function Section() {
    return createElement(loaded ?? Lazy);
  }
  return { Section, load };
}

const sections = {
  findings: section(() => import('../pages/findings/index.tsx')),
  scans: section(() => import('../pages/scans/index.tsx')),
  shield: section(() => import('../pages/shield/index.tsx')),
  config: section(() => import('../pages/config/index.tsx')),
  settings: section(() => import('../pages/settings/index.tsx')),
};

export type Section = keyof typeof sections;

export const Findings = sections.findings.Section;
export const Scans = sections.scans.Section;
export const Shield = sections.shield.Section;
export const ConfigAsCode = sections.config.Section;
export const Settings = sections.settings.Section;

/** Starts loading a section's code (repeats are free). */
export function prefetchSection(name: Section): void {
  void sections[name].load().catch(() => undefined);
}

/** Loads the code of the section a path is in; resolves at once for paths outside the sections. */
export function preloadSectionOf(path: string): Promise<void> {
  const name = /^\/([a-z-]+)/.exec(path)?.[1];
  return name && name in sections ? sections[name as Section].load().catch(() => undefined) : Promise.resolve();
}
