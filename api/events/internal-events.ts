// Platform events inside one process, for features that react to what happened (outbound webhooks
// first): Shield blocks, scan completions, new findings. Emitters never wait for or fail because of
// a listener: listeners run synchronously, and one that throws is logged and skipped.
//
// In process only. A consumer in another process does not see these: it reads `shield_events`
// (ids are ULIDs, so `id > last seen id` pages forward in time) or subscribes to the live bus
// (api/gateway/events/live-bus.ts), which carries every stored decision across processes.
import type { BaseLogger } from 'pino';
import type { DecisionEvent } from '../gateway/decision.ts';

export interface ScanCompletedEvent {
  scan_id: string;
  org_id: string;
  scan_type: string;
  target: string;
  status: 'completed' | 'failed';
  /** Findings by severity and `total`, `new`, `fixed` (completed scans). */
  summary: Record<string, number>;
}

export interface VulnerabilityCreatedEvent {
  vulnerability_id: string;
  org_id: string;
  scan_id: string;
  scan_type: string;
  target: string;
}

export interface InternalEventMap {
  /** A decision that blocked or challenged a request, emitted once its batch is committed. */
  'shield.block': DecisionEvent;
  /** A scan ended (completed or failed), emitted once its outcome is committed. */
  'scan.completed': ScanCompletedEvent;
  /** A finding seen for the first time, emitted once the scan that found it is committed. */
  'vulnerability.created': VulnerabilityCreatedEvent;
}

export type InternalEventType = keyof InternalEventMap;
export type InternalListener<K extends InternalEventType> = (payload: InternalEventMap[K]) => void;

type AnyListener = (payload: InternalEventMap[InternalEventType]) => void;

export class InternalEvents {
  private readonly listeners = new Map<InternalEventType, Set<AnyListener>>();

  constructor(private readonly log?: BaseLogger) {}

  /** Adds a listener; returns the function that removes it. */
  on<K extends InternalEventType>(type: K, listener: InternalListener<K>): () => void {
    let set = this.listeners.get(type);
    if (!set) this.listeners.set(type, (set = new Set()));
    const entry = listener as AnyListener;
    set.add(entry);
    return () => void set.delete(entry);
  }

  emit<K extends InternalEventType>(type: K, payload: InternalEventMap[K]): void {
    const set = this.listeners.get(type);
    if (!set) return;
    for (const listener of set) {
      try {
        listener(payload);
      } catch (err) {
        this.log?.error({ err, event_type: type }, 'internal event listener failed');
      }
    }
  }

  listenerCount(type: InternalEventType): number {
    return this.listeners.get(type)?.size ?? 0;
  }
}
