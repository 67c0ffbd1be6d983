// Debian nginx for the benchmarks: a static origin, a plain proxy_pass, and ModSecurity v3 with the
// OWASP Core Rule Set (paranoia level 1, blocking) in front of any origin. Used by bench/shield.ts
// (throughput) and bench/managed-rules-eval.ts (detection). Needs `nginx`, and for ModSecurity
// `libnginx-mod-http-modsecurity` and `modsecurity-crs` (Debian's packages and paths).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

export const MODSEC_MODULE = '/usr/lib/nginx/modules/ngx_http_modsecurity_module.so';
export const MODSEC_BASE = '/etc/nginx/modsecurity.conf';
export const CRS_SETUP = '/etc/modsecurity/crs';
export const CRS_RULES = '/usr/share/modsecurity-crs/rules';

/** How a process is started: the command line, possibly wrapped (`taskset` pinning in bench/shield.ts). */
export type Launcher = (cmd: string, args: string[]) => [string, string[]];
const unwrapped: Launcher = (cmd, args) => [cmd, args];

/** Whether Debian's ModSecurity module and CRS are installed (apt-get install libnginx-mod-http-modsecurity modsecurity-crs). */
export const modsecAvailable = (): boolean => [MODSEC_MODULE, MODSEC_BASE, CRS_SETUP, CRS_RULES].every((path) => existsSync(path));

/** A loopback port free at the time of asking. */
export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

/**
 * Writes `dir/modsec.conf`: the Debian defaults, blocking instead of detecting, then the CRS at its
 * default paranoia level 1 (what Debian's owasp-crs.load includes; libmodsecurity has no
 * IncludeOptional).
 */
export async function writeModsecConf(dir: string): Promise<string> {
  const includes = [`${CRS_SETUP}/crs-setup.conf`, `${CRS_SETUP}/REQUEST-900-EXCLUSION-RULES-BEFORE-CRS.conf`, `${CRS_RULES}/*.conf`, `${CRS_SETUP}/RESPONSE-999-EXCLUSION-RULES-AFTER-CRS.conf`];
  const path = join(dir, 'modsec.conf');
  await writeFile(path, [`Include ${MODSEC_BASE}`, 'SecRuleEngine On', 'SecAuditEngine Off', ...includes.map((f) => `Include ${f}`), ''].join('\n'));
  return path;
}

/** Waits until `url` answers at all (any status), up to 5 s. */
async function answering(url: string, what: string): Promise<void> {
  for (let i = 0; i < 50; i++) {
    try {
      await fetch(url);
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`${what} did not start`);
}

/**
 * One nginx (one worker, `launch` decides the core) serving an origin that answers `originBody` to
 * everything, a proxy_pass in front of it, and, when ModSecurity is installed, the same proxy with
 * ModSecurity + CRS.
 */
export async function startNginx(dir: string, options: { originBody: string; launch?: Launcher }): Promise<{ origin: number; proxy: number; modsec: number | null; process: ChildProcess }> {
  const origin = await freePort();
  const proxy = await freePort();
  const modsec = modsecAvailable() ? await freePort() : null;
  if (modsec !== null) await writeModsecConf(dir);
  const modsecServer =
    modsec === null
      ? ''
      : `server { listen 127.0.0.1:${modsec}; modsecurity on; modsecurity_rules_file ${dir}/modsec.conf; location / { proxy_pass http://origin; proxy_http_version 1.1; proxy_set_header Connection ""; } }`;
  const servers = [
    `server { listen 127.0.0.1:${origin}; default_type text/plain; location / { return 200 '${options.originBody.trimEnd()}\n'; } }`,
    `server { listen 127.0.0.1:${proxy}; location / { proxy_pass http://origin; proxy_http_version 1.1; proxy_set_header Connection ""; } }`,
    modsecServer,
  ].join('\n  ');
  const conf = nginxConf({ own: join(dir, 'nginx'), workers: 1, origin, servers, modsec: modsec !== null });
  await writeFile(join(dir, 'nginx.conf'), conf);
  const child = spawn(...(options.launch ?? unwrapped)('nginx', ['-p', dir, '-c', join(dir, 'nginx.conf')]), { stdio: 'ignore' });
  await answering(`http://127.0.0.1:${proxy}/`, 'nginx');
  return { origin, proxy, modsec, process: child };
}

/**
 * An nginx configuration around `servers`: `workers` processes, its pid, log and temp files named
 * after `own` (a path prefix in the bench's directory), keep-alive to the origin on port `origin`
 * (`upstream origin`), and the ModSecurity module loaded when `modsec`.
 */
export function nginxConf(input: { own: string; workers: number; origin: number; servers: string; modsec?: boolean }): string {
  const { own } = input;
  return `
${input.modsec ? `load_module ${MODSEC_MODULE};` : ''}
worker_processes ${input.workers};
daemon off;
pid ${own}.pid;
error_log ${own}-error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${own}-body; proxy_temp_path ${own}-proxy; fastcgi_temp_path ${own}-fcgi; uwsgi_temp_path ${own}-uwsgi; scgi_temp_path ${own}-scgi;
  keepalive_requests 1000000;
  upstream origin { server 127.0.0.1:${input.origin}; keepalive 128; }
  ${input.servers}
}`;
}

/**
 * nginx proxy_pass with `workers` worker processes in front of the origin on port `origin`; with
 * `modsec`, ModSecurity + CRS as configured in `dir/modsec.conf` (startNginx or writeModsecConf).
 */
export async function startNginxProxy(dir: string, origin: number, workers: number, modsec = false, launch: Launcher = unwrapped): Promise<{ port: number; process: ChildProcess }> {
  const port = await freePort();
  const own = join(dir, `proxy-${workers}${modsec ? '-modsec' : ''}`);
  const waf = modsec ? `modsecurity on; modsecurity_rules_file ${dir}/modsec.conf;` : '';
  const conf = nginxConf({ own, workers, origin, modsec, servers: `server { listen 127.0.0.1:${port}; ${waf} location / { proxy_pass http://origin; proxy_http_version 1.1; proxy_set_header Connection ""; } }` });
  await writeFile(`${own}.conf`, conf);
  const child = spawn(...launch('nginx', ['-p', dir, '-c', `${own}.conf`]), { stdio: 'ignore' });
  await answering(`http://127.0.0.1:${port}/`, `nginx with ${workers} workers`);
  return { port, process: child };
}
