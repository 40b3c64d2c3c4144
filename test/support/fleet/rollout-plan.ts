// The Deployment controller's rolling update, as one pure decision: given how many old and new
// pods exist and how many are ready, how many new pods to create and old pods to delete now.
// Terminating pods are not counted (the controller's default), so a new pod may be created while an
// old one drains; with hostNetwork the scheduler then holds it until the old pod has exited and
// freed the node's ports, which the driver models, not this function.

export interface Strategy {
  readonly maxSurge: number;
  readonly maxUnavailable: number;
}

/** The chart's defaults (values.yaml `updateStrategy`): surge without hostNetwork, in place with it. */
export const CHART_STRATEGIES = {
  default: { maxSurge: 1, maxUnavailable: 0 },
  hostNetwork: { maxSurge: 0, maxUnavailable: 1 },
} as const satisfies Record<string, Strategy>;

export interface RolloutState {
  readonly replicas: number;
  /** Old pods not yet deleted, and how many of them are ready. */
  readonly old: { readonly total: number; readonly ready: number };
  /** New pods created (starting or running), and how many of them are ready. */
  readonly fresh: { readonly total: number; readonly ready: number };
}

export interface RolloutStep {
  readonly create: number;
  readonly delete: number;
  /** Every pod is new and ready, and no old pod is left. */
  readonly done: boolean;
}

export function nextStep(state: RolloutState, strategy: Strategy): RolloutStep {
  const { replicas, old, fresh } = state;
  if (strategy.maxSurge === 0 && strategy.maxUnavailable === 0) throw new Error('maxSurge and maxUnavailable cannot both be 0');
  const done = old.total === 0 && fresh.total === replicas && fresh.ready === replicas;
  // Scale up: never more than replicas + maxSurge pods in all, never more new pods than replicas.
  const create = Math.max(0, Math.min(replicas - fresh.total, replicas + strategy.maxSurge - old.total - fresh.total));
  // Scale down: keep at least replicas - maxUnavailable ready pods, counting the ones being created as not ready.
  const minReady = replicas - strategy.maxUnavailable;
  const unreadyOld = old.total - old.ready;
  // Old pods that are not ready go first: deleting them costs no availability.
  const spare = Math.max(0, old.ready + fresh.ready - minReady);
  const deletable = Math.min(old.total, unreadyOld + spare);
  return { create, delete: deletable, done };
}
