// The host the chart puts on Envoy's preStop hook under hostNetwork must meet the address the
// manager listens on, whatever the node's loopback holds. Each kind of node is a network namespace
// of its own (`unshare -rn`): the built binary's manager, with no --host (as the chart runs it),
// is dialed at 127.0.0.1 and [::1] from the same namespace, as kubelet dials a hook from the node's.
import { spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { renderChart } from '../support/chart/helm.js';
import { readPod } from '../support/chart/manifests.js';
import { BIN, tempDir } from '../support/cli.js';

const PORT = 19002;

/** Inside the namespace: starts the manager, waits for its listening line, then GETs /healthz at each host once. */
const RUNNER = `
const { spawn } = require('node:child_process');
const { request } = require('node:http');
const [bin, readyFile, port] = process.argv.slice(1);
const manager = spawn(bin, ['shutdown-manager', '--port', port], { env: { ...process.env, ENVOY_SHUTDOWN_READY_FILE: readyFile }, stdio: ['ignore', 'pipe', 'inherit'] });
const get = (host) => new Promise((resolve) => {
  const req = request({ host, port: Number(port), path: '/healthz', agent: false, timeout: 5000 }, (res) => { res.resume(); res.on('end', () => resolve(res.statusCode)); });
  req.on('timeout', () => req.destroy(new Error('timeout')));
  req.on('error', (error) => resolve(error.code ?? error.message));
  req.end();
});
let buffered = '';
manager.stdout.setEncoding('utf8').on('data', async (chunk) => {
  if (buffered === null) return;
  buffered += chunk;
  if (!buffered.includes('shutdown manager listening')) return;
  buffered = null;
  const answers = { '127.0.0.1': await get('127.0.0.1'), '::1': await get('::1') };
  console.log(JSON.stringify(answers));
  manager.kill('SIGKILL');
  process.exit(0);
});
manager.once('exit', (code) => { console.error('manager exited ' + code); process.exit(1); });
`;

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

function answersOn(nodeSetup: string): Promise<Record<string, number | string>> {
  const dir = tempDir();
  cleanups.push(dir.cleanup);
  const script = `set -e\n${nodeSetup}\nexec "$@"`;
  return new Promise((resolve, reject) => {
    const child = spawn('unshare', ['-rn', 'sh', '-c', script, 'node-netns', process.execPath, '-e', RUNNER, BIN, `${dir.path}/ready`, String(PORT)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
    child.once('error', (error) => reject(new Error(`cannot run unshare (util-linux), needed for a network namespace per node: ${error.message}`)));
    child.once('exit', (code) => {
      const last = out.trim().split('\n').at(-1) ?? '';
      if (code !== 0 || !last.startsWith('{')) reject(new Error(`the namespace's run failed (exit ${code}): ${err.slice(-2_000)}`));
      else resolve(JSON.parse(last) as Record<string, number | string>);
    });
  });
}

describe("Envoy's hook host under hostNetwork meets the manager's address", () => {
  it.each([
    {
      node: 'IPv4 or dual-stack, even with net.ipv6.bindv6only=1',
      setup: 'ip link set lo up\nsysctl -qw net.ipv6.bindv6only=1',
      reached: ['127.0.0.1', '::1'],
    },
    { node: 'IPv6-only: no 127.0.0.1 on lo', setup: 'ip link set lo up\nip addr del 127.0.0.1/8 dev lo', reached: ['::1'] },
    {
      node: 'IPv6 disabled on lo',
      setup: 'sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.lo.disable_ipv6=1\nip link set lo up',
      reached: ['127.0.0.1'],
    },
  ])('$node', async ({ setup, reached }) => {
    const answers = await answersOn(setup);
    expect(
      Object.keys(answers)
        .filter((host) => answers[host] === 200)
        .sort(),
    ).toEqual([...reached].sort());
  });

  it('the default, 127.0.0.1, reaches it on every node that keeps 127.0.0.1 on lo, IPv6 or not', async () => {
    const rendered = readPod(await renderChart({ set: ['hostNetwork=true'] }));
    const host = rendered.envoy.lifecycle?.preStop?.httpGet?.host ?? '';
    expect(host).toBe('127.0.0.1');
    for (const setup of [
      'ip link set lo up\nsysctl -qw net.ipv6.bindv6only=1',
      'sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.lo.disable_ipv6=1\nip link set lo up',
    ]) {
      expect((await answersOn(setup))[host]).toBe(200);
    }
  });
});
