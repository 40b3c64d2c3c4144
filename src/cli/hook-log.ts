// How this process relates to its container: where a hook's logs must go. Signals live in
// shared/signals.ts, which the entry point loads before anything else.
import { DEFAULT_HOOK_LOG_PATH, ENV } from './config.js';

/**
 * Inside Kubernetes and not the container's main process means we run as an exec hook (or by
 * `kubectl exec`): kubelet discards a hook's output, so logs are copied to PID 1's stdout too.
 */
export function hookLogMirror(env: NodeJS.ProcessEnv = process.env, pid: number = process.pid): string | undefined {
  if (env['KUBERNETES_SERVICE_HOST'] === undefined || env['KUBERNETES_SERVICE_HOST'] === '' || pid === 1) return undefined;
  return env[ENV.hookLogPath] || DEFAULT_HOOK_LOG_PATH;
}
