// How this process relates to its container: signals and where a hook's logs must go.
import { DEFAULT_HOOK_LOG_PATH, ENV } from './config.js';

const SIGNAL_NUMBERS = { SIGINT: 2, SIGTERM: 15 } as const;

/**
 * First SIGINT/SIGTERM: `onFirst` starts an orderly stop. A second one exits at once with
 * 128 + the signal number, for an operator who does not want to wait.
 */
export function onTerminationSignal(onFirst: (signal: NodeJS.Signals) => void): void {
  let received = false;
  const handle = (signal: keyof typeof SIGNAL_NUMBERS): void => {
    if (received) process.exit(128 + SIGNAL_NUMBERS[signal]);
    received = true;
    onFirst(signal);
  };
  process.on('SIGINT', handle);
  process.on('SIGTERM', handle);
}

/**
 * Inside Kubernetes and not the container's main process means we run as an exec hook (or by
 * `kubectl exec`): kubelet discards a hook's output, so logs are copied to PID 1's stdout too.
 */
export function hookLogMirror(env: NodeJS.ProcessEnv = process.env, pid: number = process.pid): string | undefined {
  if (env['KUBERNETES_SERVICE_HOST'] === undefined || env['KUBERNETES_SERVICE_HOST'] === '' || pid === 1) return undefined;
  return env[ENV.hookLogPath] || DEFAULT_HOOK_LOG_PATH;
}
