// hey, the load generator Envoy Gateway used to prove its shutdown manager, built from its Go module
// with the ordinary Go client (pinned version; the Go checksum database verifies the module) into a
// cache outside the repository, once. A run sends a constant rate through the balancer until
// stop() (SIGINT: hey then prints its summary), bounded by its own -z as well; every status and
// every error hey reports is counted.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

const HEY_MODULE = 'github.com/rakyll/hey';
export const HEY_VERSION = 'v0.1.4';
/** Outside the repository, by version: a new pin builds anew. */
const HEY_DIR = join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'esm-hey', HEY_VERSION);
const HEY_BIN = join(HEY_DIR, 'hey');

/** Builds hey when the cache has none; throws one clear line when Go is missing or the build fails. */
export function ensureHey(): string {
  if (existsSync(HEY_BIN)) return HEY_BIN;
  const go = spawnSync('go', ['version'], { encoding: 'utf8' });
  if (go.error !== undefined || go.status !== 0)
    throw new Error(`go is not installed: the fleet tests build ${HEY_MODULE}@${HEY_VERSION} with it (${go.error?.message ?? go.stderr})`);
  const result = spawnSync('go', ['install', `${HEY_MODULE}@${HEY_VERSION}`], {
    encoding: 'utf8',
    env: { ...process.env, GOBIN: HEY_DIR, CGO_ENABLED: '0', GOFLAGS: '-trimpath' },
    timeout: 600_000,
  });
  if (result.status !== 0 || !existsSync(HEY_BIN))
    throw new Error(`go install ${HEY_MODULE}@${HEY_VERSION} failed (${result.error?.message ?? `exit ${result.status}`}): ${result.stderr.slice(-1_000)}`);
  return HEY_BIN;
}

export interface HeyOptions {
  readonly url: string;
  /** Concurrent workers (-c), each on its own keep-alive connection. */
  readonly workers: number;
  /** Requests per second per worker (-q). */
  readonly ratePerWorker: number;
  /** Upper bound of the run (-z), in seconds; stop() normally ends it sooner. */
  readonly maxSeconds: number;
  /** Per-request timeout (-t), in seconds. */
  readonly timeoutSeconds: number;
}

export interface HeyReport {
  /** Responses by status code. */
  readonly statuses: Readonly<Record<string, number>>;
  /** Errors by hey's own message (resets, EOFs, timeouts, refused connections). */
  readonly errors: Readonly<Record<string, number>>;
  readonly responses: number;
  /** Non-2xx responses plus errors. */
  readonly failed: number;
}

export interface HeyRun {
  stop(): Promise<HeyReport>;
}

export function startHey(binary: string, options: HeyOptions): HeyRun {
  const args = [
    '-c',
    String(options.workers),
    '-q',
    String(options.ratePerWorker),
    '-z',
    `${options.maxSeconds}s`,
    '-t',
    String(options.timeoutSeconds),
    options.url,
  ];
  const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out = (out + chunk).slice(-64_000)));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err = (err + chunk).slice(-4_000)));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let stopped: Promise<HeyReport> | undefined;
  return {
    stop() {
      stopped ??= (async () => {
        child.kill('SIGINT');
        // hey ends its workers, waits for their requests (bounded by -t), then prints.
        const killer = setTimeout(() => child.kill('SIGKILL'), (options.timeoutSeconds + 5) * 1_000);
        const code = await exited;
        clearTimeout(killer);
        if (code !== 0) throw new Error(`hey exited ${code}: ${err}${out.slice(-1_000)}`);
        return parseHeyReport(out);
      })();
      return stopped;
    },
  };
}

/** hey's summary: `Status code distribution:` and `Error distribution:` sections of `[key]\tcount text` lines. */
export function parseHeyReport(text: string): HeyReport {
  if (!text.includes('Summary:')) throw new Error(`hey printed no summary: ${text.slice(-500)}`);
  const section = (title: string): Record<string, number> => {
    const start = text.indexOf(title);
    if (start < 0) return {};
    const counts: Record<string, number> = {};
    for (const line of text
      .slice(start + title.length)
      .split('\n')
      .slice(1)) {
      const match = /^\s+\[(\d+)\]\s+(\d+) responses$/.exec(line) ?? /^\s+\[(\d+)\]\s+(.+)$/.exec(line);
      if (match === null) break;
      // Status lines: [code] n responses; error lines: [n] message.
      if (title.startsWith('Status')) counts[match[1] ?? ''] = Number(match[2]);
      else counts[match[2] ?? ''] = (counts[match[2] ?? ''] ?? 0) + Number(match[1]);
    }
    return counts;
  };
  const statuses = section('Status code distribution:');
  const errors = section('Error distribution:');
  const sum = (counts: Record<string, number>): number => Object.values(counts).reduce((a, b) => a + b, 0);
  const non2xx = sum(Object.fromEntries(Object.entries(statuses).filter(([code]) => !code.startsWith('2'))));
  return { statuses, errors, responses: sum(statuses), failed: non2xx + sum(errors) };
}
