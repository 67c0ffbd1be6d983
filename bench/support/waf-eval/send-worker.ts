// The worker thread that sends the evaluation's requests (send.ts starts it with the job).
import { parentPort, workerData } from 'node:worker_threads';
import { sendHere, type SendJob, type SendMessage } from './send.ts';

const port = parentPort!;
const post = (message: SendMessage, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer);
const answers = await sendHere(workerData as SendJob, (progress) => post({ progress }));
// The answer arrays are handed over, not copied.
post({ answers }, answers.flatMap(([, a]) => [a.status.buffer as ArrayBuffer, a.fromOrigin.buffer as ArrayBuffer]));
