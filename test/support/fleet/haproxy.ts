// HAProxy from Debian (test/setup/debian.mjs installs it) as the fleet's load balancer: started in the
// foreground from haproxyConfig(), driven through its runtime API (the stats socket), and read
// through `show stat`. Every runtime command is bounded in time and answer size.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pollFor } from '../poll.js';
import { type HaproxyOptions, HTTP1_BACKEND, HTTP2_BACKEND, haproxyConfig, slotName } from './haproxy-config.js';

const MAX_ANSWER_BYTES = 1024 * 1024;
const COMMAND_TIMEOUT_MS = 5_000;

/** What `haproxy -v` says, e.g. `2.6.12-1+deb12u4`; throws one clear line when HAProxy is missing. */
export function haproxyVersion(): string {
  const result = spawnSync('haproxy', ['-v'], { encoding: 'utf8' });
  const version = /HAProxy version (\S+)/.exec(result.stdout ?? '')?.[1];
  if (result.error !== undefined || version === undefined) {
    throw new Error(
      `haproxy is not installed or does not run (Debian: apt-get install -y haproxy; test/setup/debian.mjs does it): ${result.error?.message ?? result.stderr}`,
    );
  }
  return version;
}

/** Per-server and per-backend counters of `show stat`, as numbers (empty fields are 0). */
export interface ServerStats {
  readonly backend: string;
  readonly server: string;
  readonly status: string;
  /** Connection errors to the server. */
  readonly econ: number;
  /** Response errors (the server closed or reset before a complete answer). */
  readonly eresp: number;
  /** Retries and redispatches: 0 with retries off. */
  readonly wretr: number;
  readonly wredis: number;
  readonly hrsp5xx: number;
  /** Sessions aborted by the server. */
  readonly srvAbrt: number;
  /** Sessions aborted by the client. */
  readonly cliAbrt: number;
  /** Sessions ever sent to it. */
  readonly stot: number;
}

export type Slot = Readonly<{ traffic: number; ready: number }>;

/** A server state change HAProxy reported (on stderr, in the foreground), with when it was read. */
export interface StateChange {
  readonly at: number;
  readonly backend: string;
  readonly server: string;
  readonly state: 'UP' | 'DOWN';
}

export class Haproxy {
  private log = '';
  readonly stateChanges: StateChange[] = [];

  private constructor(
    private readonly child: ChildProcess,
    private readonly dir: string,
    readonly options: HaproxyOptions,
    private readonly exited: Promise<void>,
  ) {
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      this.log = (this.log + chunk).slice(-8_000);
      for (const match of chunk.matchAll(/Server ([\w-]+)\/([\w-]+) is (?:going )?(UP|DOWN)/g)) {
        this.stateChanges.push({ at: Date.now(), backend: match[1] ?? '', server: match[2] ?? '', state: match[3] === 'UP' ? 'UP' : 'DOWN' });
      }
    });
  }

  static async start(options: Omit<HaproxyOptions, 'statsSocket'>): Promise<Haproxy> {
    const dir = mkdtempSync(join(tmpdir(), 'esm-haproxy-'));
    const full: HaproxyOptions = { ...options, statsSocket: join(dir, 'admin.sock') };
    const config = join(dir, 'haproxy.cfg');
    writeFileSync(config, haproxyConfig(full));
    // -db: foreground, no daemon; -W off: one process this test owns.
    const child = spawn('haproxy', ['-db', '-f', config], { stdio: ['ignore', 'ignore', 'pipe'] });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const haproxy = new Haproxy(child, dir, full, exited);
    try {
      await pollFor(
        'haproxy answering on its stats socket',
        () =>
          haproxy.command('show info').then(
            () => true,
            () => (child.exitCode === null ? undefined : Promise.reject(new Error(`haproxy exited ${child.exitCode}: ${haproxy.log}`))),
          ),
        { timeoutMs: 10_000 },
      );
    } catch (error) {
      await haproxy.stop();
      throw error;
    }
    return haproxy;
  }

  /** One runtime API command; resolves with HAProxy's answer. */
  command(line: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = connect(this.options.statsSocket);
      let answer = '';
      const timer = setTimeout(() => socket.destroy(new Error(`haproxy did not answer "${line}" within ${COMMAND_TIMEOUT_MS} ms`)), COMMAND_TIMEOUT_MS);
      socket.setEncoding('utf8');
      socket.once('connect', () => socket.write(`${line}\n`));
      socket.on('data', (chunk: string) => {
        answer += chunk;
        if (answer.length > MAX_ANSWER_BYTES) socket.destroy(new Error(`haproxy's answer to "${line}" is longer than ${MAX_ANSWER_BYTES} bytes`));
      });
      socket.once('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
      socket.once('close', (hadError) => {
        clearTimeout(timer);
        if (!hadError) resolve(answer);
      });
    });
  }

  /** Runs each command in order; an answer other than empty or a known success fails. */
  private async commands(lines: readonly string[]): Promise<void> {
    for (const line of lines) {
      const answer = (await this.command(line)).trim();
      if (answer !== '' && !/^(Health check|IP changed|port changed|no need to change|IP changed from|health check port updated)/i.test(answer)) {
        throw new Error(`haproxy refused "${line}": ${answer}`);
      }
    }
  }

  /** Puts a pod in `slot` of both backends (traffic port, readiness port for the checks) and out of maintenance. */
  async admit(slot: number, ports: Slot): Promise<void> {
    const name = slotName(slot);
    const checked = this.options.mode === 'health-check';
    await this.commands([
      ...[HTTP1_BACKEND, HTTP2_BACKEND].map((backend) => `set server ${backend}/${name} addr 127.0.0.1 port ${ports.traffic}`),
      ...(checked ? [`set server ${HTTP1_BACKEND}/${name} check-port ${ports.ready}`] : []),
      ...[HTTP1_BACKEND, HTTP2_BACKEND].map((backend) => `set server ${backend}/${name} state ready`),
    ]);
  }

  /** Takes `slot` out of both backends for new requests (maintenance); requests in flight go on. */
  async remove(slot: number): Promise<void> {
    await this.commands([HTTP1_BACKEND, HTTP2_BACKEND].map((backend) => `set server ${backend}/${slotName(slot)} state maint`));
  }

  async stats(): Promise<ServerStats[]> {
    return parseShowStat(await this.command('show stat'));
  }

  /** Resolves once `slot` is UP in the HTTP/1.1 backend (its checks passed `rise` times). */
  async waitUp(slot: number, timeoutMs: number): Promise<void> {
    const name = slotName(slot);
    let seen = '';
    await pollFor(
      `haproxy seeing ${name} UP`,
      async () => {
        seen = (await this.stats()).find((s) => s.backend === HTTP1_BACKEND && s.server === name)?.status ?? 'missing';
        return seen.startsWith('UP') && !seen.includes('/') ? true : undefined;
      },
      { timeoutMs, everyMs: 20, lastSeen: () => seen },
    );
  }

  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.child.kill('SIGKILL');
      await this.exited;
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** `show stat` CSV: the header line starts with `# `; one row per frontend, server and backend. */
export function parseShowStat(csv: string): ServerStats[] {
  const [header, ...rows] = csv.trim().split('\n');
  if (header === undefined || !header.startsWith('# ')) throw new Error(`not a show stat answer: ${csv.slice(0, 200)}`);
  const fields = header.slice(2).split(',');
  const at = (name: string): number => {
    const index = fields.indexOf(name);
    if (index < 0) throw new Error(`show stat has no ${name} column`);
    return index;
  };
  const columns = {
    backend: at('pxname'),
    server: at('svname'),
    status: at('status'),
    econ: at('econ'),
    eresp: at('eresp'),
    wretr: at('wretr'),
    wredis: at('wredis'),
    hrsp5xx: at('hrsp_5xx'),
    srvAbrt: at('srv_abrt'),
    cliAbrt: at('cli_abrt'),
    stot: at('stot'),
  };
  return rows.map((row) => {
    const cells = row.split(',');
    const num = (index: number): number => Number(cells[index] || 0);
    return {
      backend: cells[columns.backend] ?? '',
      server: cells[columns.server] ?? '',
      status: cells[columns.status] ?? '',
      econ: num(columns.econ),
      eresp: num(columns.eresp),
      wretr: num(columns.wretr),
      wredis: num(columns.wredis),
      hrsp5xx: num(columns.hrsp5xx),
      srvAbrt: num(columns.srvAbrt),
      cliAbrt: num(columns.cliAbrt),
      stot: num(columns.stot),
    };
  });
}
