// How this process relates to its container: where a hook's logs must go. Signals live in
// shared/signals.ts, which the entry point loads before anything else.

import { ENVIRONMENT } from './environment.js';

/** PID 1's stdout: what `kubectl logs` shows for the container the hook runs in. */
const DEFAULT_HOOK_LOG_PATH = '/proc/1/fd/1';

/**
 * Inside Kubernetes and not the container's main process means we run as an exec hook (or by
 * `kubectl exec`): kubelet discards a hook's output, so logs are copied to PID 1's stdout too.
 */
export function hookLogMirror(env: NodeJS.ProcessEnv, pid: number = process.pid): string | undefined {
  const host = env[ENVIRONMENT.kubernetesServiceHost];
  if (host === undefined || host === '' || pid === 1) return undefined;
  return env[ENVIRONMENT.hookLogPath] || DEFAULT_HOOK_LOG_PATH;
}
