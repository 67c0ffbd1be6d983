// Certificates for tests, made by the `openssl` command as an operator would make them: a local CA
// and leaves it signs, with any names, validity window and key type. `openssl ca` sets exact start
// and end dates (so expired and not-yet-valid certificates can be made without touching the clock).
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface IssuedCertificate {
  /** The leaf alone (PEM). */
  leafPem: string;
  /** The leaf, then the CA (PEM): what an upload sends. */
  chainPem: string;
  keyPem: string;
}

export interface LeafOptions {
  names: string[];
  /** `YYYYMMDDHHMMSSZ`; default: an hour ago. */
  startDate?: string;
  /** `YYYYMMDDHHMMSSZ`; default: 30 days from now. */
  endDate?: string;
  /** `ec` (P-256, default) or `rsa:<bits>`. */
  key?: 'ec' | `rsa:${number}`;
}

export interface TestCa {
  certPem: string;
  issue(options: LeafOptions): Promise<IssuedCertificate>;
  close(): void;
}

const CA_CONFIG = `[ ca ]
default_ca = test_ca
[ test_ca ]
dir = .
database = ./index.txt
new_certs_dir = .
serial = ./serial
default_md = sha256
policy = any
unique_subject = no
copy_extensions = none
[ any ]
commonName = supplied
`;

/** `YYYYMMDDHHMMSSZ` of a date. */
export const asn1Time = (date: Date): string => `${date.toISOString().replace(/[-:T]/g, '').slice(0, 14)}Z`;

const keyArgs = (key: LeafOptions['key'] = 'ec'): string[] => (key === 'ec' ? ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256'] : ['-newkey', key]);

export async function makeTestCa(name = 'Aegis Test CA'): Promise<TestCa> {
  const dir = mkdtempSync(join(tmpdir(), 'aegis-ca-'));
  const openssl = (args: string[]) => run('openssl', args, { cwd: dir });
  writeFileSync(join(dir, 'ca.cnf'), CA_CONFIG);
  writeFileSync(join(dir, 'index.txt'), '');
  writeFileSync(join(dir, 'serial'), '1000\n');
  await openssl(['req', '-x509', ...keyArgs(), '-nodes', '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '60', '-subj', `/CN=${name}`]);
  const certPem = readFileSync(join(dir, 'ca.crt'), 'utf8');
  let count = 0;
  // `openssl ca` keeps its serial and index in files: one issuance at a time.
  let queue: Promise<unknown> = Promise.resolve();
  const issueNow = async (options: LeafOptions): Promise<IssuedCertificate> => {
    const id = `leaf${++count}`;
    await openssl(['req', ...keyArgs(options.key), '-nodes', '-keyout', `${id}.key`, '-out', `${id}.csr`, '-subj', `/CN=${options.names[0] ?? 'no-name'}`]);
    const san = options.names.map((n) => `DNS:${n}`).join(',');
    writeFileSync(join(dir, `${id}.ext`), `${san ? `subjectAltName=${san}\n` : ''}basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n`);
    const start = options.startDate ?? asn1Time(new Date(Date.now() - 3_600_000));
    const end = options.endDate ?? asn1Time(new Date(Date.now() + 30 * 86_400_000));
    await openssl(['ca', '-batch', '-config', 'ca.cnf', '-in', `${id}.csr`, '-out', `${id}.crt`, '-startdate', start, '-enddate', end, '-extfile', `${id}.ext`, '-notext', '-cert', 'ca.crt', '-keyfile', 'ca.key']);
    const leafPem = readFileSync(join(dir, `${id}.crt`), 'utf8');
    return { leafPem, chainPem: leafPem + certPem, keyPem: readFileSync(join(dir, `${id}.key`), 'utf8') };
  };
  return {
    certPem,
    issue(options) {
      const issued = queue.then(() => issueNow(options));
      queue = issued.catch(() => undefined);
      return issued;
    },
    close: () => rmSync(dir, { recursive: true, force: true }),
  };
}
