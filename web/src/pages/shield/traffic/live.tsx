// Placeholder: the live decisions of one site.
export function SiteLive({ siteId }: { siteId: string }) {
  return <p>Live decisions of {siteId}</p>;
}
