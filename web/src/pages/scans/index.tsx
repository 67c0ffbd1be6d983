// The Scans section: the list (/scans), starting a scan of each kind (/scans/new/<kind>) and one
// scan's detail (/scans/<id>). Paths here are relative to /scans (wouter nest).
import { Route, Switch } from 'wouter';
import { ScanDetail } from './detail.tsx';
import { ScanList } from './list.tsx';
import { NewScan } from './new-scan.tsx';
import './scans.css';

export default function Scans() {
  return (
    <Switch>
      <Route path="/">{() => <ScanList />}</Route>
      <Route path="/new">{() => <NewScan kind={undefined} />}</Route>
      <Route path="/new/:kind">{(params) => <NewScan kind={params.kind} />}</Route>
      <Route path="/:id">{(params) => <ScanDetail id={params.id} />}</Route>
    </Switch>
  );
}
