// Builds Envoy Gateway's and Contour's own binaries, for the benchmarks only, from the commits
// pinned below, as each project's Makefile builds them, into a cache outside the repository (one
// directory per commit: a new pin builds anew). The source comes from a git directory holding the
// commit, $EG_SRC / $CONTOUR_SRC (a clone, or its .git), else that one commit fetched from GitHub.
// Go modules come from the module proxy, checked against the checksum database as usual.
//
//   node scripts/peer-binaries.mjs          # prints EG_BIN=… and CONTOUR_BIN=…, building what is missing
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

export const PEERS = {
  eg: {
    env: 'EG_BIN',
    repo: 'envoyproxy/gateway',
    commit: 'd32f28294245e454d20f81d323d626a90e660c1e',
    binary: 'envoy-gateway',
    // EG ships it unstripped.
    build: ['build', '-o', 'envoy-gateway', './cmd/envoy-gateway'],
  },
  contour: {
    env: 'CONTOUR_BIN',
    repo: 'projectcontour/contour',
    commit: '31c4bb38e0a52cef4d8273dd5641a70e39f1d693',
    binary: 'contour',
    build: ['build', '-mod=readonly', '-ldflags=-s -w', '-o', 'contour', './cmd/contour'],
  },
};

const CACHE = join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'esm-peers');

export function peerBinaryPath(peer) {
  return join(CACHE, `${peer.binary}-${peer.commit.slice(0, 12)}`, peer.binary);
}

/** The cached binary's path, building it first when the cache lacks it. */
export function ensurePeerBinary(peer, log = (line) => process.stderr.write(`${line}\n`)) {
  const target = peerBinaryPath(peer);
  if (existsSync(target)) return target;
  const work = mkdtempSync(join(tmpdir(), `esm-${peer.binary}-`));
  try {
    const source = sourceDir(peer, work, log);
    log(`building ${peer.repo}@${peer.commit.slice(0, 12)} (a few minutes on 2 cores)`);
    run('go', peer.build, { cwd: source, env: { ...process.env, CGO_ENABLED: '0' }, timeout: 1_800_000 }, `go build of ${peer.repo}`);
    mkdirSync(join(target, '..'), { recursive: true });
    renameSync(join(source, peer.binary), target);
    return target;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** The pinned commit's tree, unpacked into `work/src` with `git archive`. */
function sourceDir(peer, work, log) {
  const named = process.env[peer.env.replace('_BIN', '_SRC')];
  let gitDir =
    named !== undefined && existsSync(named) && spawnSync('git', ['-C', named, 'cat-file', '-e', `${peer.commit}^{commit}`]).status === 0 ? named : undefined;
  if (gitDir === undefined) {
    gitDir = join(work, 'git');
    log(`fetching ${peer.commit.slice(0, 12)} from https://github.com/${peer.repo}`);
    run('git', ['init', '--quiet', '--bare', gitDir], { timeout: 60_000 }, 'git init');
    // The one commit, without history: GitHub serves a commit by its id.
    run(
      'git',
      ['-C', gitDir, 'fetch', '--quiet', '--depth', '1', `https://github.com/${peer.repo}.git`, peer.commit],
      { timeout: 900_000 },
      `git fetch of ${peer.repo}`,
    );
  }
  const src = join(work, 'src');
  mkdirSync(src);
  const archive = spawnSync('git', ['-C', gitDir, 'archive', '--format=tar', peer.commit], { maxBuffer: 2 ** 31, timeout: 300_000 });
  if (archive.status !== 0) throw new Error(`git archive ${peer.commit} in ${gitDir} failed: ${String(archive.stderr).slice(-500)}`);
  const untar = spawnSync('tar', ['-x', '-C', src], { input: archive.stdout, timeout: 300_000 });
  if (untar.status !== 0) throw new Error(`tar failed: ${String(untar.stderr).slice(-500)}`);
  return src;
}

function run(command, args, options, what) {
  const result = spawnSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'inherit', 'pipe'], ...options });
  if (result.error !== undefined || result.status !== 0)
    throw new Error(`${what} failed (${result.error?.message ?? `exit ${result.status}`}): ${(result.stderr ?? '').slice(-2_000)}`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  for (const peer of Object.values(PEERS)) console.log(`${peer.env}=${ensurePeerBinary(peer)}`);
}
