// Podman from the tests and their global setup: every command runs with the project's
// containers.conf and is bounded in time; removeRun() sweeps everything a test run labelled.
import { spawn } from 'node:child_process';
import { imageScripts } from './scripts.js';

// Loaded once, on first use (no top-level await: the fleet runner is bundled as CommonJS).
const scripts = imageScripts();

/** The label every object of one test run carries; its value is the run's id. */
export const RUN_LABEL = 'envoy-shutdown-manager.test-run';

export interface PodmanResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** The environment every podman command runs with (the project's containers.conf). */
export async function podmanEnv(): Promise<NodeJS.ProcessEnv> {
  return (await scripts).podman.podmanEnv();
}

/** Runs podman; resolves with its exit code and output whatever the code (a timeout kills it). */
export async function podmanRun(args: readonly string[], timeoutMs = 60_000): Promise<PodmanResult> {
  const { podman: script } = await scripts;
  return new Promise((resolve, reject) => {
    const child = spawn('podman', args, { env: script.podmanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Runs podman and returns its stdout; a non-zero exit throws with the command and its output. */
export async function podman(args: readonly string[], timeoutMs?: number): Promise<string> {
  const result = await podmanRun(args, timeoutMs);
  if (result.code !== 0) throw new Error(`podman ${args.join(' ')}: exit ${result.code}\n${result.stderr}${result.stdout}`.trim());
  return result.stdout;
}

/** Removes every container, pod and volume labelled with `runId` (the global teardown's sweep). */
export async function removeRun(runId: string): Promise<string[]> {
  const filter = ['--filter', `label=${RUN_LABEL}=${runId}`];
  const ids = async (args: string[]): Promise<string[]> => (await podman([...args, ...filter])).split('\n').filter((id) => id !== '');
  const pods = await ids(['pod', 'ps', '--quiet']);
  const containers = await ids(['ps', '--all', '--quiet']);
  const volumes = await ids(['volume', 'ls', '--quiet']);
  for (const id of containers) await podmanRun(['rm', '--force', '--time', '0', id]);
  for (const id of pods) await podmanRun(['pod', 'rm', '--force', '--time', '0', id]);
  for (const id of volumes) await podmanRun(['volume', 'rm', '--force', id]);
  return [...pods, ...containers, ...volumes];
}
