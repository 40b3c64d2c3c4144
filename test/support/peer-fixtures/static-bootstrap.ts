// What turns a peer's xDS (delivered at run time by its control plane) into a bootstrap Envoy
// loads on its own: static listeners, route configurations inlined where an HTTP connection
// manager named one (RDS), clusters pointing at a loopback backend instead of endpoints from EDS,
// and certificates made by the test instead of secrets from SDS. Names, stat prefixes, filter
// chains and addresses stay exactly as the peer generated them: they are what the fixture is for.
import { arrayField, clone, deleteField, eachObject, field, isObject, type Json, type JsonObject, objectField, setField, stringField } from './proto-json.js';

/** Where the test's backend listens and where its certificate files are. */
export interface TestEnvironment {
  readonly backend: { readonly address: string; readonly port: number };
  readonly certificate: { readonly certFile: string; readonly keyFile: string };
}

const HCM_TYPE = '.HttpConnectionManager';

/** Replaces each HTTP connection manager's `rds` by the route configuration of that name. */
export function inlineRoutes(listeners: JsonObject[], routes: ReadonlyMap<string, JsonObject>): void {
  for (const listener of listeners) {
    eachObject(listener, (object) => {
      if (!String(object['@type'] ?? '').endsWith(HCM_TYPE)) return;
      const rds = objectField(object, 'rds');
      if (rds === undefined) return;
      const name = stringField(rds, 'route_config_name') ?? '';
      const route = routes.get(name);
      if (route === undefined) throw new Error(`listener ${stringField(listener, 'name')}: no route configuration ${name} in the fixture`);
      deleteField(object, 'rds');
      setField(object, 'route_config', clone(route));
    });
  }
}

/**
 * Each cluster that took its endpoints from EDS (or a control plane's DNS name) becomes STATIC with
 * the fixture's own endpoints, each moved to the test's backend; a cluster with none gets one.
 */
export function clustersOnBackend(clusters: JsonObject[], endpoints: ReadonlyMap<string, JsonObject>, env: TestEnvironment): JsonObject[] {
  return clusters.map((original) => {
    const cluster = clone(original);
    const name = stringField(cluster, 'name') ?? '';
    const assignment = clone(endpoints.get(name) ?? objectField(cluster, 'load_assignment') ?? { cluster_name: name, endpoints: [] });
    deleteField(cluster, 'eds_cluster_config');
    deleteField(cluster, 'cluster_discovery_type');
    setField(cluster, 'type', 'STATIC');
    onBackend(assignment, env);
    if (arrayField(assignment, 'endpoints').length === 0)
      setField(assignment, 'endpoints', [{ lb_endpoints: [{ endpoint: { address: backendAddress(env) } }] }]);
    setField(cluster, 'load_assignment', assignment);
    return cluster;
  });
}

function backendAddress(env: TestEnvironment): JsonObject {
  return { socket_address: { address: env.backend.address, port_value: env.backend.port } };
}

function onBackend(assignment: JsonObject, env: TestEnvironment): void {
  eachObject(assignment, (object) => {
    const socket = objectField(object, 'socket_address');
    if (socket === undefined) return;
    setField(socket, 'address', env.backend.address);
    setField(socket, 'port_value', env.backend.port);
  });
}

/**
 * Every secret fetched over SDS becomes a static secret of the same name holding the test's
 * certificate (a validation context: the same certificate as the trusted CA); returns those secrets.
 */
export function staticSecrets(resources: Json, env: TestEnvironment): JsonObject[] {
  const secrets = new Map<string, JsonObject>();
  eachObject(resources, (object) => {
    for (const [key, kind] of [
      ['tls_certificate_sds_secret_configs', 'certificate'],
      ['validation_context_sds_secret_config', 'validation'],
    ] as const) {
      const value = field(object, key);
      const configs = Array.isArray(value) ? value : isObject(value) ? [value] : [];
      for (const config of configs.filter(isObject)) {
        const name = stringField(config, 'name') ?? '';
        deleteField(config, 'sds_config'); // a secret by name alone is a static one
        secrets.set(name, secret(name, kind, env));
      }
    }
  });
  return [...secrets.values()];
}

function secret(name: string, kind: 'certificate' | 'validation', env: TestEnvironment): JsonObject {
  const { certFile, keyFile } = env.certificate;
  return kind === 'certificate'
    ? { name, tls_certificate: { certificate_chain: { filename: certFile }, private_key: { filename: keyFile } } }
    : { name, validation_context: { trusted_ca: { filename: certFile } } };
}

/** Entries of a ConfigDump section, each the resource under `key` (e.g. dynamicListeners[].activeState.listener). */
export function byName(resources: readonly JsonObject[]): Map<string, JsonObject> {
  return new Map(resources.map((resource) => [stringField(resource, 'name') ?? stringField(resource, 'cluster_name') ?? '', resource]));
}
