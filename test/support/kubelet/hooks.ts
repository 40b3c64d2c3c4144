// preStop handlers and probes as kubelet runs them. exec: a command inside the container, with the
// container's environment, its output discarded (kept here only for assertions). httpGet: a GET
// to the address rules.ts `hookTarget` picks; only a broken connection fails it (`runHTTPHandler`
// checks no status), and nothing bounds it in time. Probes: one GET to the pod's status IP, bounded
// by timeoutSeconds, passing on 200-399 (`runProbe`, probe/http/http.go `DoHTTPProbe`).
import { spawn } from 'node:child_process';
import { request } from 'node:http';
import type { IContainer, IHTTPGetAction } from 'kubernetes-models/v1';
import { type HookPod, hookTarget, probeHost } from './rules.js';

export interface HttpGetAction {
  readonly port: number;
  readonly path: string;
  readonly host?: string;
  readonly httpHeaders?: ReadonlyArray<{ name: string; value: string }>;
}

export type PreStopHook = { readonly exec: { readonly command: readonly string[] } } | { readonly httpGet: HttpGetAction };

interface HookResult {
  readonly ok: boolean;
  /** `exit 0`, `HTTP 200`, `error ECONNRESET`, `error failed to find networking container: …`, `killed with its container` … */
  readonly detail: string;
  readonly output?: string;
}

export interface RunningHook {
  readonly done: Promise<HookResult>;
  /** Ends the hook: an exec hook's container is gone, or the test cleans up. */
  kill(): void;
}

/** kubelet's User-Agent: `kube-<purpose>/<major>.<minor>` (probe/http/request.go `userAgent`). */
const KUBE_VERSION = '1.33';

export function describeHook(hook: PreStopHook): string {
  if ('exec' in hook) return `exec ${hook.exec.command.map((part) => part.split('/').at(-1)).join(' ')}`;
  return `httpGet ${hook.httpGet.host ?? ''}:${hook.httpGet.port}${hook.httpGet.path}`;
}

/** `ResolveContainerPort` (probe/util.go): a port named among the container's own, else its number. */
function resolveContainerPort(c: IContainer, port: number | string): number {
  if (typeof port === 'number') return port;
  const found = c.ports?.find((p) => p.name === port)?.containerPort ?? (/^\d+$/.test(port) ? Number(port) : undefined);
  if (found === undefined) throw new Error(`${c.name}: no port named ${port}`);
  return found;
}

/** A rendered httpGet, a hook's or a probe's, as the stand-ins run it: its port moved to where `reach` says this machine reaches it. */
function httpGetAction(c: IContainer, get: IHTTPGetAction, reach: (port: number) => number): HttpGetAction {
  const { path, port, host, httpHeaders } = get;
  return {
    path: path ?? '/',
    port: reach(resolveContainerPort(c, port)),
    ...(host === undefined ? {} : { host }),
    ...(httpHeaders === undefined ? {} : { httpHeaders }),
  };
}

/** A rendered container's preStop hook as a stand-in runs it: an httpGet's port through `reach`, an exec's command through `exec`. */
export function renderedHook(
  c: IContainer,
  reach: (port: number) => number,
  exec: (command: readonly string[]) => readonly string[] = (command) => command,
): PreStopHook | undefined {
  const preStop = c.lifecycle?.preStop;
  if (preStop === undefined) return undefined;
  if (preStop.httpGet !== undefined) return { httpGet: httpGetAction(c, preStop.httpGet, reach) };
  if (preStop.exec?.command !== undefined) return { exec: { command: exec(preStop.exec.command) } };
  throw new Error(`${c.name}: a preStop hook the stand-ins cannot run: ${JSON.stringify(preStop)}`);
}

/** A rendered container's startup (else readiness) httpGet probe, which gates the next container; its port through `reach`. */
export function renderedProbe(c: IContainer, reach: (port: number) => number): (HttpGetAction & { readonly timeoutSeconds: number }) | undefined {
  const probe = c.startupProbe ?? c.readinessProbe;
  if (probe?.httpGet === undefined) return undefined;
  return { ...httpGetAction(c, probe.httpGet, reach), timeoutSeconds: probe.timeoutSeconds ?? 1 };
}

export function runHook(hook: PreStopHook, env: Readonly<Record<string, string>>, pod: HookPod): RunningHook {
  if ('exec' in hook) return runExec(hook.exec.command, env);
  const target = hookTarget(hook.httpGet.host, pod);
  if ('error' in target) return { done: Promise.resolve({ ok: false, detail: `error ${target.error}` }), kill: () => undefined };
  return runHttpGet(hook.httpGet, target.host);
}

/** One run of an httpGet probe: true when it passed. */
export async function runProbe(probe: HttpGetAction & { readonly timeoutSeconds: number }, pod: HookPod): Promise<boolean> {
  const answer = await get(probeHost(probe.host, pod), probe, 'probe', AbortSignal.timeout(probe.timeoutSeconds * 1_000));
  return 'status' in answer && answer.status >= 200 && answer.status < 400;
}

function runExec(command: readonly string[], env: Readonly<Record<string, string>>): RunningHook {
  const [file, ...args] = command as [string, ...string[]];
  const child = spawn(file, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  let killed = false;
  const done = new Promise<HookResult>((resolve) => {
    child.once('error', (error) => resolve({ ok: false, detail: `error ${error.message}`, output }));
    child.once('close', (code, signal) => {
      if (killed) resolve({ ok: false, detail: 'killed with its container', output });
      else resolve({ ok: code === 0, detail: signal === null ? `exit ${code}` : `signal ${signal}`, output });
    });
  });
  return {
    done,
    kill() {
      killed = true;
      child.kill('SIGKILL');
    },
  };
}

function runHttpGet(spec: HttpGetAction, host: string): RunningHook {
  const controller = new AbortController();
  const done = get(host, spec, 'lifecycle', controller.signal).then((answer): HookResult => {
    if ('status' in answer) return { ok: true, detail: `HTTP ${answer.status}`, output: answer.body };
    return { ok: false, detail: controller.signal.aborted ? 'killed with its container' : `error ${answer.error}` };
  });
  return { done, kill: () => controller.abort() };
}

/** kubelet's GET (probe/http/request.go `NewRequestForHTTPGetAction`): its own User-Agent and Accept unless the spec sets them. */
function get(
  host: string,
  spec: HttpGetAction,
  purpose: 'lifecycle' | 'probe',
  signal: AbortSignal,
): Promise<{ status: number; body: string } | { error: string }> {
  const headers: Record<string, string> = { 'user-agent': `kube-${purpose}/${KUBE_VERSION}`, accept: '*/*' };
  for (const { name, value } of spec.httpHeaders ?? []) headers[name.toLowerCase()] = value;
  return new Promise((resolve) => {
    const req = request({ host, port: spec.port, path: spec.path, method: 'GET', agent: false, signal, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
    });
    req.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
    req.end();
  });
}
