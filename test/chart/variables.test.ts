// The chart's templates spell our variables by hand (Helm cannot import them): each must be one the
// commands read, so a renamed or mistyped variable fails here instead of being silently ignored.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ENV } from '../../src/cli/config.js';

const TEMPLATES = 'charts/envoy-shutdown-manager/templates';

function variablesIn(dir: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) for (const [name, file] of variablesIn(path)) found.set(name, file);
    else for (const [name] of readFileSync(path, 'utf8').matchAll(/ENVOY_SHUTDOWN_[A-Z0-9_]+/g)) found.set(name, path);
  }
  return found;
}

describe("the chart's environment variables", () => {
  const known = new Set<string>(Object.values(ENV));
  const used = variablesIn(TEMPLATES);

  it('names some', () => {
    expect(used.size).toBeGreaterThan(10);
  });

  it.each([...used])('%s (in %s) is read by a command', (name) => {
    expect(known.has(name)).toBe(true);
  });
});
