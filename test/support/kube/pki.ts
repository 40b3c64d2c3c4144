// What the tests' API server authenticates with, made afresh in its temp dir: a CA and a serving
// certificate for 127.0.0.1 (openssl, which test/setup/debian.mjs installs), a service-account signing
// key pair (TokenRequest), and a static token for an admin in system:masters. Valid for a day.
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface KubePki {
  readonly caFile: string;
  readonly certFile: string;
  readonly keyFile: string;
  readonly serviceAccountKeyFile: string;
  readonly serviceAccountPublicKeyFile: string;
  /** kube-apiserver's --token-auth-file: one line, the admin's. */
  readonly tokenFile: string;
  readonly adminToken: string;
}

function openssl(args: readonly string[]): void {
  try {
    execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'], timeout: 10_000 });
  } catch (error) {
    throw new Error(`openssl ${args[0]} failed (test/setup/debian.mjs installs openssl): ${(error as Error).message}`);
  }
}

export function makeKubePki(dir: string): KubePki {
  const file = (name: string): string => join(dir, name);
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl([
    'req',
    '-x509',
    ...ec,
    '-days',
    '1',
    '-subj',
    '/CN=esm-test-kubernetes-ca',
    '-keyout',
    file('ca.key'),
    '-out',
    file('ca.crt'),
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  openssl([
    'req',
    '-new',
    ...ec,
    '-subj',
    '/CN=kube-apiserver',
    '-keyout',
    file('apiserver.key'),
    '-out',
    file('apiserver.csr'),
    '-addext',
    'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes.default.svc',
    '-addext',
    'extendedKeyUsage=serverAuth',
  ]);
  openssl([
    'x509',
    '-req',
    '-in',
    file('apiserver.csr'),
    '-CA',
    file('ca.crt'),
    '-CAkey',
    file('ca.key'),
    '-set_serial',
    `0x${randomBytes(8).toString('hex')}`,
    '-days',
    '1',
    '-copy_extensions',
    'copyall',
    '-out',
    file('apiserver.crt'),
  ]);
  const serviceAccount = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  writeFileSync(file('sa.key'), serviceAccount.privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  writeFileSync(file('sa.pub'), serviceAccount.publicKey.export({ type: 'spki', format: 'pem' }));
  const adminToken = randomBytes(24).toString('hex');
  // token,user,uid,"groups"
  writeFileSync(file('tokens.csv'), `${adminToken},esm-test-admin,esm-test-admin,"system:masters"\n`, { mode: 0o600 });
  return {
    caFile: file('ca.crt'),
    certFile: file('apiserver.crt'),
    keyFile: file('apiserver.key'),
    serviceAccountKeyFile: file('sa.key'),
    serviceAccountPublicKeyFile: file('sa.pub'),
    tokenFile: file('tokens.csv'),
    adminToken,
  };
}
