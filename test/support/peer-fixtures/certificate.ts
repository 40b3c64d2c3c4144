// The certificate the peers' TLS listeners (terminated HTTPS, HTTP/3) get in the tests, instead of
// the secrets their control plane would send: one for example.test, made once per process with
// openssl (../protocols/certs.ts) in a temp dir removed at exit. Test-only: the key is world-readable.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeCertificate } from '../protocols/certs.js';

export interface TestCertificate {
  readonly certFile: string;
  readonly keyFile: string;
}

let made: TestCertificate | undefined;

export function testCertificate(): TestCertificate {
  if (made !== undefined) return made;
  const dir = mkdtempSync(join(tmpdir(), 'esm-peer-cert-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const { certPath, keyPath } = makeCertificate(dir, 'example.test');
  // Readable by the user a pod's Envoy runs as, where the directory is mounted into its container.
  chmodSync(dir, 0o755);
  chmodSync(keyPath, 0o644);
  made = { certFile: certPath, keyFile: keyPath };
  return made;
}
