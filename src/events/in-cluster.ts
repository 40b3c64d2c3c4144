// Where Events go, by the in-cluster convention every Kubernetes client follows: the API server
// from KUBERNETES_SERVICE_HOST/PORT, the pod's service-account token and CA from their mounted
// directory; the pod itself from the downward API, through variables the chart sets.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ENVIRONMENT } from '../shared/environment.js';
import { UsageError } from '../shared/errors.js';

/** Where kubelet mounts the pod's service-account token, CA and namespace. */
const DEFAULT_SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

export interface PodRef {
  readonly name: string;
  readonly namespace: string;
  readonly uid: string;
  readonly nodeName: string | undefined;
}

export interface EventsTarget {
  /** The API server's address: an IP or a name, without brackets. */
  readonly host: string;
  readonly port: number;
  /** Holds `token` and `ca.crt`, read at each send: kubelet rotates the token in place. */
  readonly serviceAccountDir: string;
  readonly pod: PodRef;
}

export type EventsSetup = { readonly kind: 'on'; readonly target: EventsTarget } | { readonly kind: 'off'; readonly why: string };

/**
 * Events enabled: where they go, or why none will be sent (outside a cluster: no API server
 * variables or no token). Inside one, a missing or malformed pod variable is a usage error.
 */
export function eventsSetup(env: NodeJS.ProcessEnv): EventsSetup {
  const host = env[ENVIRONMENT.kubernetesServiceHost];
  const portText = env[ENVIRONMENT.kubernetesServicePort];
  if (!host || !portText) return { kind: 'off', why: `${ENVIRONMENT.kubernetesServiceHost}/PORT not set: not in a cluster` };
  const serviceAccountDir = env[ENVIRONMENT.serviceAccountDir] || DEFAULT_SERVICE_ACCOUNT_DIR;
  if (!existsSync(join(serviceAccountDir, 'token'))) return { kind: 'off', why: `no service-account token in ${serviceAccountDir}` };
  const port = Number(portText);
  if (!/^\d{1,5}$/.test(portText) || port < 1 || port > 65535)
    throw new UsageError(`${ENVIRONMENT.kubernetesServicePort}: not a port: ${JSON.stringify(portText)}`);
  const required = (name: string, pattern: RegExp): string => {
    const value = env[name];
    if (value === undefined || value === '') throw new UsageError(`--events needs ${name} (the chart sets it from the downward API)`);
    if (!pattern.test(value)) throw new UsageError(`${name}: not a Kubernetes name: ${JSON.stringify(value)}`);
    return value;
  };
  const pod: PodRef = {
    name: required(ENVIRONMENT.podName, DNS_SUBDOMAIN),
    namespace: required(ENVIRONMENT.podNamespace, DNS_LABEL),
    uid: required(ENVIRONMENT.podUid, UID),
    nodeName: env[ENVIRONMENT.nodeName] || undefined,
  };
  return { kind: 'on', target: { host: host.replace(/^\[(.*)\]$/, '$1'), port, serviceAccountDir, pod } };
}

const DNS_SUBDOMAIN = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS_LABEL = /^(?=.{1,63}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const UID = /^[0-9a-fA-F-]{1,64}$/;
