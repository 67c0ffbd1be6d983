// One worker of a gateway cluster (./primary.ts): the ordinary gateway data plane on the port the
// primary shares out (node:cluster hands each accepted connection to a worker in turn). It loads and
// refreshes sites from PostgreSQL itself, as a separate `aegis shield` node does, so a rule update
// reaches every worker by the same poll; rate limits go to Redis or, without it, to the primary.
import { startStandaloneGateway } from '../standalone.ts';
import { IpcRateState } from './ipc-rate-state.ts';
import { WORKER_ENV, isPrimaryMessage, type WorkerMessage, type WorkerSetup } from './messages.ts';
import { errorMessage } from '../../schemas/json-value.ts';

const send = (message: WorkerMessage): void => {
  // With a callback, a channel already closed (the primary is gone) is reported to it, not thrown
  // as an 'error' event on the process; 'disconnect' below then stops this worker.
  if (process.connected) process.send?.(message, undefined, undefined, () => undefined);
};

const raw = process.env[WORKER_ENV];
if (!raw || !process.send) throw new Error('the Shield gateway worker is started by `aegis shield --workers N`, not directly');
const setup = JSON.parse(raw) as WorkerSetup;
const config = setup.settings;
// Handlers go on before the gateway has started, so a shutdown asked for during start-up is not lost.
const starting = startStandaloneGateway(config, {
  rateState: setup.ipcRateState ? new IpcRateState(process) : undefined,
  migrate: false,
  collectMetrics: setup.collectMetrics,
  poolSize: setup.poolSize,
});

let closing: Promise<void> | undefined;
/** Stops taking connections, finishes those in flight, writes the queued decisions, then exits. */
function shutdown(): Promise<void> {
  closing ??= starting
    .then((gateway) => gateway.close())
    .then(
      () => process.exit(0),
      () => process.exit(1),
    );
  return closing;
}

process.on('message', (message: unknown) => {
  if (!isPrimaryMessage(message)) return;
  if (message.aegis === 'shutdown') void shutdown();
  else if (message.aegis === 'metrics-request') {
    const id = message.id;
    starting
      .then((gateway) => {
        if (!gateway.metrics) throw new Error('metrics are not collected');
        return gateway.metrics.registry.getMetricsAsJSON();
      })
      .then(
        (json) => send({ aegis: 'metrics', id, metrics: json }),
        (err: unknown) => send({ aegis: 'metrics', id, error: errorMessage(err) }),
      );
  }
});
// Ctrl-C reaches the whole process group: the primary decides when workers stop (it sends
// 'shutdown'), so a terminal's SIGINT is not taken as a crash. SIGTERM sent to this worker alone
// stops it gracefully (the primary then starts a replacement unless it is itself stopping).
process.on('SIGINT', () => undefined);
process.on('SIGTERM', () => void shutdown());
// The primary is gone (killed): nothing will restart or stop this worker, so stop.
process.on('disconnect', () => void shutdown());

const gateway = await starting;
send({ aegis: 'ready', port: gateway.port, tlsPort: gateway.tlsPort });
