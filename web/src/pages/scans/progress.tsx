// A scan's status with, while it moves, its progress as a labelled native progress bar.
import { StatusBadge } from '../../components/badges.tsx';
import { isActive, type Scan } from './model.ts';

export function ScanProgress({ scan }: { scan: Pick<Scan, 'id' | 'status' | 'progress'> }) {
  const percent = Math.round(scan.progress * 100);
  return (
    <span className="scan-progress" data-testid={`scan-status-${scan.id}`} data-status={scan.status}>
      <StatusBadge status={scan.status} />
      {isActive(scan.status) && (
        <>
          <progress max={100} value={scan.status === 'queued' ? undefined : percent} aria-label={`Progress of scan ${scan.id}`} />
          <span className="muted">{scan.status === 'queued' ? 'waiting' : `${percent} %`}</span>
        </>
      )}
    </span>
  );
}
