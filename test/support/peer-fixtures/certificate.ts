// A certificate made by the test for the peers' TLS listeners (terminated HTTPS, HTTP/3): a
// self-signed EC key pair for example.test and its subdomains, made once per process with openssl
// (scripts/debian.mjs installs it), in a temp dir removed at exit. Test-only: the key is world-readable.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestCertificate {
  readonly certFile: string;
  readonly keyFile: string;
}

let made: TestCertificate | undefined;

export function testCertificate(): TestCertificate {
  if (made !== undefined) return made;
  const dir = mkdtempSync(join(tmpdir(), 'esm-peer-cert-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const certFile = join(dir, 'tls.crt');
  const keyFile = join(dir, 'tls.key');
  const args = ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2', '-subj', '/CN=example.test', '-addext', 'subjectAltName=DNS:example.test,DNS:*.example.test', '-keyout', keyFile, '-out', certFile];
  const result = spawnSync('openssl', args, { encoding: 'utf8', timeout: 10_000 });
  if (result.error !== undefined) throw new Error(`cannot run openssl, needed for the peers' TLS listeners (node scripts/debian.mjs installs it): ${result.error.message}`);
  if (result.status !== 0) throw new Error(`openssl req failed (exit ${result.status}): ${result.stderr.trim()}`);
  // Readable by the user a pod's Envoy runs as, where the directory is mounted into its container.
  chmodSync(dir, 0o755);
  chmodSync(keyFile, 0o644);
  made = { certFile, keyFile };
  return made;
}
