// Placeholder until this settings page is built.
export default function SettingsPage() {
  return <h2>plan</h2>;
}
