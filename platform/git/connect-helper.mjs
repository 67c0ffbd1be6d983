// git's core.gitProxy command (for git://) and ssh's ProxyCommand (for ssh://, scp-like URLs) while
// Aegis clones: `connect-helper.mjs <host> <port>` opens a tunnel to host:port through the clone's
// egress proxy (platform/net/egress-proxy.ts, whose URL is in AEGIS_EGRESS_PROXY) with HTTP CONNECT, then
// copies stdin to the tunnel and the tunnel to stdout. The proxy judges the destination under the
// outbound policy; a refusal is printed on stderr (git shows it) and the helper exits 1. Plain
// JavaScript with no imports of ours: it runs as its own process, from the source tree, built or not.
import { connect } from 'node:net';

const [host, port] = process.argv.slice(2);
const proxy = process.env.AEGIS_EGRESS_PROXY ? new URL(process.env.AEGIS_EGRESS_PROXY) : null;

function fail(message) {
  process.stderr.write(`aegis: ${message}\n`);
  process.exit(1);
}

if (!proxy || !host || !port || !/^\d{1,5}$/.test(port)) fail('usage: connect-helper.mjs <host> <port> with AEGIS_EGRESS_PROXY set');

const authority = `${host.includes(':') ? `[${host}]` : host}:${port}`;
const credentials = Buffer.from(`${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`).toString('base64');
const socket = connect({ host: proxy.hostname, port: Number(proxy.port) });
socket.on('error', (err) => fail(`egress proxy: ${err.message}`));
socket.once('connect', () => socket.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\nProxy-Authorization: Basic ${credentials}\r\n\r\n`));

let head = Buffer.alloc(0);
function onData(chunk) {
  head = Buffer.concat([head, chunk]);
  const end = head.indexOf('\r\n\r\n');
  if (end === -1) {
    if (head.length > 16 * 1024) fail('egress proxy: answer too long');
    return;
  }
  socket.off('data', onData);
  const [statusLine] = head.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? '')?.[1]);
  if (status !== 200) {
    socket.setEncoding('utf8');
    let reason = head.subarray(end + 4).toString('utf8');
    socket.on('data', (more) => (reason += more));
    socket.on('end', () => fail(`${authority}: ${reason.trim() || statusLine}`));
    return;
  }
  const rest = head.subarray(end + 4);
  if (rest.length > 0) process.stdout.write(rest);
  socket.pipe(process.stdout);
  process.stdin.pipe(socket);
  // Exit once the destination has closed and everything it sent has reached git.
  socket.on('close', () => process.stdout.end(() => process.exit(0)));
}
socket.on('data', onData);
