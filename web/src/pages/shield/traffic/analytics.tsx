// Placeholder: the analytics of one site.
export function SiteAnalytics({ siteId }: { siteId: string }) {
  return <p>Analytics of {siteId}</p>;
}
