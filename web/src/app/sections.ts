// The lazily loaded sections: one chunk each, fetched on first visit — or earlier, when the
// pointer or the keyboard reaches its link in the navigation (`prefetchSection`), so a click
// rarely waits for code.
import { lazy } from 'react';

const loaders = {
  findings: () => import('../pages/findings/index.tsx'),
  scans: () => import('../pages/scans/index.tsx'),
  shield: () => import('../pages/shield/index.tsx'),
  config: () => import('../pages/config/index.tsx'),
  settings: () => import('../pages/settings/index.tsx'),
} as const;

export type Section = keyof typeof loaders;

export const Findings = lazy(loaders.findings);
export const Scans = lazy(loaders.scans);
export const Shield = lazy(loaders.shield);
export const ConfigAsCode = lazy(loaders.config);
export const Settings = lazy(loaders.settings);

/** Starts loading a section's code (the module cache makes repeats free). */
export function prefetchSection(section: Section): void {
  void loaders[section]().catch(() => undefined);
}
