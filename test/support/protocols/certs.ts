// Certificates for the TLS and QUIC listeners, made on this machine with openssl (no network): one
// self-signed certificate per name, each its own CA, valid for a day.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

export interface Certificate {
  readonly name: string;
  readonly certPath: string;
  readonly keyPath: string;
}

/** A P-256 key and a self-signed certificate for `name` (its CN, and its DNS SAN unless `san` says otherwise) in `dir`. */
export function makeCertificate(dir: string, name: string, san = `DNS:${name}`): Certificate {
  const certPath = join(dir, `${name}.crt`);
  const keyPath = join(dir, `${name}.key`);
  const args = [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-days',
    '1',
    '-subj',
    `/CN=${name}`,
    '-addext',
    `subjectAltName=${san}`,
    '-keyout',
    keyPath,
    '-out',
    certPath,
  ];
  try {
    execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'], timeout: 10_000 });
  } catch (error) {
    throw new Error(`openssl could not make a certificate for ${name} (test/setup/debian.mjs installs openssl): ${(error as Error).message}`);
  }
  return { name, certPath, keyPath };
}
