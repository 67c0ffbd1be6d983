// Findings: the list (filters in the URL) and each finding's page with its evidence, history and
// triage actions.
import { Route, Switch } from 'wouter';
import { FindingDetail } from './detail.tsx';
import { FindingsList } from './list.tsx';
import './findings.css';

export default function Findings() {
  return (
    <Switch>
      <Route path="/" component={FindingsList} />
      <Route path="/:id">{(params) => <FindingDetail id={params.id} />}</Route>
    </Switch>
  );
}
