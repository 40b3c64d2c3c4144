// The podman objects one test (or one fleet run) creates: every container, pod and volume gets a
// name unique to the run and the run's label, so it is removed afterwards (also when the test
// fails) and the global teardown sweeps whatever a crashed test left behind. No vitest here: the
// fleet runner, a process of its own, uses it too.
import { randomBytes } from 'node:crypto';
import { podman, podmanRun, RUN_LABEL } from './podman-run.js';

/** Names and removes what one test creates. */
export class RunObjects {
  private readonly containers: string[] = [];
  private readonly pods: string[] = [];
  private readonly volumes: string[] = [];
  private readonly others: Array<() => void> = [];
  private readonly prefix: string;
  private count = 0;

  constructor(private readonly runId: string) {
    this.prefix = `esm-${runId}-${randomBytes(3).toString('hex')}`;
  }

  /** `--label` arguments that tie an object to this run. */
  get labelArgs(): string[] {
    return ['--label', `${RUN_LABEL}=${this.runId}`];
  }

  container(role: string): string {
    return this.track(this.containers, role);
  }

  pod(role: string): string {
    return this.track(this.pods, role);
  }

  async volume(role: string): Promise<string> {
    const name = this.track(this.volumes, role);
    await podman(['volume', 'create', ...this.labelArgs, name]);
    return name;
  }

  /** Something else to undo once the containers are gone (a host directory they mounted). */
  onRemove(cleanup: () => void): void {
    this.others.push(cleanup);
  }

  /** Containers first (a pod's own are removed with it), then pods, then volumes; throws at the end, once, naming what stayed. */
  async removeAll(): Promise<void> {
    const problems: string[] = [];
    const remove = async (args: string[]): Promise<void> => {
      const result = await podmanRun(args, 30_000);
      if (result.code !== 0 && !/no such|not found|no pod with name/i.test(result.stderr)) problems.push(`${args.join(' ')}: ${result.stderr.trim()}`);
    };
    for (const name of this.containers.splice(0)) await remove(['rm', '--force', '--time', '0', name]);
    for (const name of this.pods.splice(0)) await remove(['pod', 'rm', '--force', '--time', '0', name]);
    for (const name of this.volumes.splice(0)) await remove(['volume', 'rm', '--force', name]);
    for (const cleanup of this.others.splice(0)) cleanup();
    if (problems.length > 0) throw new Error(`podman objects left behind:\n${problems.join('\n')}`);
  }

  private track(list: string[], role: string): string {
    this.count += 1;
    const name = `${this.prefix}-${role}-${this.count}`;
    list.push(name);
    return name;
  }
}
