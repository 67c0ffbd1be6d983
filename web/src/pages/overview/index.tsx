// Placeholder until the section is built.
import { PageHeader } from '../../components/page.tsx';

export default function Section() {
  return <PageHeader title="Overview" />;
}
