// The real Envoy binary, as test/setup/envoy.mjs fetches and verifies it: the global setup, the tests,
// the demo and the benchmarks all go through here, so there is one pinned version and no fall-back.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

interface EnvoyScript {
  readonly ENVOY_VERSION: string;
  readonly ENVOY_BINARY: string;
  ensureEnvoy(options?: { log?: (line: string) => void }): string;
}

async function script(): Promise<EnvoyScript> {
  // A computed specifier: TypeScript cannot type a .mjs without declarations, so the shape is checked here.
  const loaded = (await import(pathToFileURL(resolve('test/setup/envoy.mjs')).href)) as Partial<EnvoyScript>;
  if (typeof loaded.ensureEnvoy !== 'function' || typeof loaded.ENVOY_VERSION !== 'string' || typeof loaded.ENVOY_BINARY !== 'string') {
    throw new Error('test/setup/envoy.mjs no longer exports ensureEnvoy, ENVOY_VERSION and ENVOY_BINARY');
  }
  return loaded as EnvoyScript;
}

/** Fetches and verifies the pinned Envoy when the cache lacks it; returns the binary's path. */
export async function ensureEnvoyBinary(): Promise<string> {
  return (await script()).ensureEnvoy();
}

export async function envoyVersion(): Promise<string> {
  return (await script()).ENVOY_VERSION;
}
