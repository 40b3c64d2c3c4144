// preStop handlers as kubelet runs them. exec: a command inside the container, with the
// container's environment, its output discarded (kept here only for assertions). httpGet: a GET
// from outside the pod to the pod IP; any status, or a broken connection, ends the hook.
import { spawn } from 'node:child_process';
import { request } from 'node:http';

export type PreStopHook =
  | { readonly exec: { readonly command: readonly string[] } }
  | { readonly httpGet: { readonly port: number; readonly path: string; readonly host?: string; readonly httpHeaders?: ReadonlyArray<{ name: string; value: string }> } };

export interface HookResult {
  readonly ok: boolean;
  /** `exit 0`, `HTTP 200`, `error ECONNRESET`, `killed at the grace period` … */
  readonly detail: string;
  readonly output?: string;
}

export interface RunningHook {
  readonly done: Promise<HookResult>;
  /** The grace period ended: kubelet stops waiting and the container is killed with the hook in it. */
  kill(): void;
}

export function describeHook(hook: PreStopHook): string {
  if ('exec' in hook) return `exec ${hook.exec.command.map((part) => part.split('/').at(-1)).join(' ')}`;
  return `httpGet :${hook.httpGet.port}${hook.httpGet.path}`;
}

export function runHook(hook: PreStopHook, env: Readonly<Record<string, string>>): RunningHook {
  return 'exec' in hook ? runExec(hook.exec.command, env) : runHttpGet(hook.httpGet);
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
      if (killed) resolve({ ok: false, detail: 'killed at the grace period', output });
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

function runHttpGet(spec: Extract<PreStopHook, { httpGet: unknown }>['httpGet']): RunningHook {
  const controller = new AbortController();
  const done = new Promise<HookResult>((resolve) => {
    const req = request(
      {
        host: spec.host ?? '127.0.0.1',
        port: spec.port,
        path: spec.path,
        method: 'GET',
        agent: false,
        signal: controller.signal,
        headers: Object.fromEntries((spec.httpHeaders ?? []).map(({ name, value }) => [name, value])),
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          resolve({ ok: status >= 200 && status < 400, detail: `HTTP ${status}`, output: body });
        });
        res.on('error', (error) => resolve({ ok: false, detail: `error ${error.message}` }));
      },
    );
    req.on('error', (error: NodeJS.ErrnoException) => {
      resolve({ ok: false, detail: controller.signal.aborted ? 'killed at the grace period' : `error ${error.code ?? error.message}` });
    });
    req.end();
  });
  return { done, kill: () => controller.abort() };
}
