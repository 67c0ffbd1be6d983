// Proving an organisation controls an e-mail domain, as an admin would: claim it, publish the TXT
// record Aegis names on the test's DNS server (the server reads it through
// AEGIS_VERIFICATION_DNS_SERVERS), and ask Aegis to verify.
import type { DnsServer } from './dns-server.ts';
import { request, type TestServer } from './server.ts';

export async function verifyDomain(t: TestServer, dns: DnsServer, domain: string, key = t.adminKey): Promise<{ id: string; token: string }> {
  const claimed = await request<any>(t.url, 'POST', '/api/v1/orgs/current/domains', { key, body: { domain } });
  if (claimed.status !== 201 && claimed.status !== 200) throw new Error(`claim ${domain}: ${claimed.status} ${claimed.text}`);
  const { name, value } = claimed.body.verification as { name: string; value: string };
  dns.setTxt(name, [value]);
  const verified = await request<any>(t.url, 'POST', `/api/v1/orgs/current/domains/${claimed.body.id}/verify`, { key });
  if (verified.status !== 200) throw new Error(`verify ${domain}: ${verified.status} ${verified.text}`);
  return { id: claimed.body.id, token: value };
}
