// The side loads of one termination, together: started once the pod is up, each ready before
// time zero, told when the load balancer deprograms the pod, and their reports gathered.
import { waitFor } from '../traffic/pod-conditions.js';
import type { SideContext, SideLoad, SideLoadFactory, SideReport } from './side-load.js';

/** Bounds a load's first answers: a pod that never answers fails here with the load's name. */
const READY_WITHIN_MS = 30_000;

export class SideLoads {
  private constructor(private readonly loads: readonly SideLoad[]) {}

  static async start(factories: readonly SideLoadFactory[], context: SideContext): Promise<SideLoads> {
    const loads: SideLoad[] = [];
    try {
      for (const factory of factories) loads.push(await factory(context));
      await Promise.all(
        loads.map(async (load) => {
          let ready = false;
          void load.ready().then(() => (ready = true));
          await waitFor(`${load.name}: answers from the pod`, () => ready, READY_WITHIN_MS);
        }),
      );
      return new SideLoads(loads);
    } catch (error) {
      await Promise.all(loads.map((load) => load.close()));
      throw error;
    }
  }

  get slowRequests(): number {
    return this.loads.reduce((sum, load) => sum + load.slowRequests, 0);
  }

  get idle(): ReadonlyArray<{ closed(): boolean; close(): Promise<void> }> {
    return this.loads.flatMap((load) => load.idle);
  }

  startLong(): void {
    for (const load of this.loads) load.startLong();
  }

  terminationStarted(zero: number, deprogrammedAt: number): void {
    for (const load of this.loads) load.terminationStarted(zero, deprogrammedAt);
  }

  finish(): Promise<SideReport[]> {
    return Promise.all(this.loads.map((load) => load.finish()));
  }

  async close(): Promise<void> {
    await Promise.all(this.loads.map((load) => load.close()));
  }
}
