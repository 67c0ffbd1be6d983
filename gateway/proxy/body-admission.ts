// What request bodies may hold of the gateway while they arrive, so no client can starve an origin
// or the gateway itself (docs/shield-gateway.md, "Resource limits"):
//   - bodies are buffered before the origin is contacted (as nginx does by default), so a client
//     that declares a megabyte and sends a byte holds a socket of the gateway, never a pooled
//     origin connection;
//   - each client may have `uploadsPerClient` bodies arriving at once (a body read whole no longer
//     counts: it waits for the origin, not for the client), and `bytesPerClient` of them held in memory; all clients together `totalBytes` — past either, 429 (that client) or
//     503 (everyone, briefly);
//   - a body must keep arriving: after a grace period, at least `minBytesPerSecond` on average,
//     else 408 (a slow-body attack, or a client that stalled);
//   - a body larger than the buffer streams to the origin, but each client may stream
//     `streamsPerClient` at once and each origin take `streamsPerOrigin`, so streams never fill
//     an origin's connection pool.

export interface BodyBudget {
  /** A body up to this size is held whole before forwarding; a larger one streams (within the stream slots). */
  bufferBytes: number;
  /** Bodies a client may send at once (being buffered or streamed). */
  uploadsPerClient: number;
  /** Body bytes of one client held in memory at once. */
  bytesPerClient: number;
  /** Body bytes of all clients held in memory at once. */
  totalBytes: number;
  /** Bodies larger than the buffer a client may stream to origins at once. */
  streamsPerClient: number;
  /** Bodies streaming to one origin at once (a share of its connection pool). */
  streamsPerOrigin: number;
  /** The slowest average a body may arrive at, after `graceMs`. */
  minBytesPerSecond: number;
  graceMs: number;
}

export const DEFAULT_BODY_ADMISSION: BodyBudget = {
  bufferBytes: 8 * 1024 * 1024,
  uploadsPerClient: 32,
  bytesPerClient: 32 * 1024 * 1024,
  totalBytes: 256 * 1024 * 1024,
  streamsPerClient: 4,
  streamsPerOrigin: 32,
  minBytesPerSecond: 1024,
  graceMs: 10_000,
};

export type AdmissionRefusal = 'client_uploads' | 'client_bytes' | 'total_bytes' | 'client_streams' | 'origin_streams';

/** One body's claim on the budget: bytes held and a stream slot, all given back by release(). */
export interface BodyTicket {
  /** Holds `bytes` more in memory; the refusal when the client or everyone is over. */
  hold(bytes: number): AdmissionRefusal | null;
  /** Claims a slot to stream the rest to `origin`; the refusal when the client or the origin has none. */
  stream(origin: string): AdmissionRefusal | null;
  /** The body has arrived whole: its upload slot goes back (the client may send another) while its bytes stay held. */
  arrived(): void;
  release(): void;
}

export class BodyAdmission {
  readonly #uploads = new Map<string, number>();
  readonly #bytes = new Map<string, number>();
  readonly #streams = new Map<string, number>();
  readonly #originStreams = new Map<string, number>();
  #total = 0;

  constructor(readonly limits: BodyBudget = DEFAULT_BODY_ADMISSION) {}

  /** Bytes held by all bodies now (metrics, tests). */
  get heldBytes(): number {
    return this.#total;
  }

  /** A ticket for a body of `client`, or the refusal when it already sends as many as it may. */
  admit(client: string): BodyTicket | AdmissionRefusal {
    const uploads = this.#uploads.get(client) ?? 0;
    if (uploads >= this.limits.uploadsPerClient) return 'client_uploads';
    this.#uploads.set(client, uploads + 1);
    let held = 0;
    let streamingTo: string | null = null;
    let released = false;
    let uploading = true;
    const endUpload = () => {
      if (!uploading) return;
      uploading = false;
      decrement(this.#uploads, client, 1);
    };
    return {
      hold: (bytes) => {
        const mine = this.#bytes.get(client) ?? 0;
        if (mine + bytes > this.limits.bytesPerClient) return 'client_bytes';
        if (this.#total + bytes > this.limits.totalBytes) return 'total_bytes';
        this.#bytes.set(client, mine + bytes);
        this.#total += bytes;
        held += bytes;
        return null;
      },
      stream: (origin) => {
        const mine = this.#streams.get(client) ?? 0;
        if (mine >= this.limits.streamsPerClient) return 'client_streams';
        const theirs = this.#originStreams.get(origin) ?? 0;
        if (theirs >= this.limits.streamsPerOrigin) return 'origin_streams';
        this.#streams.set(client, mine + 1);
        this.#originStreams.set(origin, theirs + 1);
        streamingTo = origin;
        return null;
      },
      arrived: endUpload,
      release: () => {
        if (released) return;
        released = true;
        endUpload();
        decrement(this.#bytes, client, held);
        this.#total -= held;
        if (streamingTo !== null) {
          decrement(this.#streams, client, 1);
          decrement(this.#originStreams, streamingTo, 1);
        }
      },
    };
  }
}

function decrement(counts: Map<string, number>, key: string, by: number): void {
  const left = (counts.get(key) ?? 0) - by;
  if (left > 0) counts.set(key, left);
  else counts.delete(key);
}
