// A site's TLS settings as stored (`tls`): how it gets its certificate, the HTTP → HTTPS redirect,
// HSTS and the oldest TLS version it accepts. They change through the API's `tls` field, config or
// Terraform.
import { Facts } from '../../../components/facts.tsx';
import type { Site } from '../shared/api.ts';
import { hstsText, TLS_MODES } from './facts.ts';

export function TlsSettingsSection({ site }: { site: Site }) {
  const { tls } = site;
  const mode = TLS_MODES[tls.mode];
  return (
    <section aria-labelledby="site-tls-title">
      <div className="shield-section-head">
        <h2 id="site-tls-title">TLS settings</h2>
      </div>
      <Facts
        layout="grid"
        items={[
          ['TLS mode', mode.label],
          ['HTTP → HTTPS redirect', tls.redirect_http ? 'on (once the site has a certificate)' : 'off'],
          ['HSTS', hstsText(tls.hsts)],
          ['Minimum TLS version', `TLS ${tls.min_version}`],
        ]}
      />
      <p className="muted">{mode.what}</p>
    </section>
  );
}
