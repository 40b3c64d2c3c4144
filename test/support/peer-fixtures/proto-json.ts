// Envoy configuration as the peers print it: proto3 JSON, whose field names may be lowerCamelCase
// (Go's protojson: Envoy Gateway, Contour) or snake_case (hand-written, Envoy's own dumps). Envoy
// reads both, so fixtures are kept as printed and these helpers read and write either spelling.

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function camel(snake: string): string {
  return snake.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** The key under which `object` holds the field `snake` (either spelling), or undefined. */
function keyOf(object: JsonObject, snake: string): string | undefined {
  if (snake in object) return snake;
  const lower = camel(snake);
  return lower in object ? lower : undefined;
}

/** The field's value, whichever spelling it was printed in. */
export function field(object: JsonObject, snake: string): Json | undefined {
  const key = keyOf(object, snake);
  return key === undefined ? undefined : object[key];
}

export function objectField(object: JsonObject, snake: string): JsonObject | undefined {
  const value = field(object, snake);
  return isObject(value) ? value : undefined;
}

export function arrayField(object: JsonObject, snake: string): Json[] {
  const value = field(object, snake);
  return Array.isArray(value) ? value : [];
}

export function stringField(object: JsonObject, snake: string): string | undefined {
  const value = field(object, snake);
  return typeof value === 'string' ? value : undefined;
}

/** Sets the field under the spelling it already has, or snake_case when it is new. */
export function setField(object: JsonObject, snake: string, value: Json): void {
  object[keyOf(object, snake) ?? snake] = value;
}

export function deleteField(object: JsonObject, snake: string): void {
  const key = keyOf(object, snake);
  if (key !== undefined) delete object[key];
}

/** Every object in the tree, parents before children (each visited once, mutations allowed). */
export function eachObject(value: Json, visit: (object: JsonObject) => void): void {
  if (Array.isArray(value)) {
    for (const item of value) eachObject(item, visit);
  } else if (isObject(value)) {
    visit(value);
    for (const item of Object.values(value)) eachObject(item, visit);
  }
}

export function clone<T extends Json>(value: T): T {
  return structuredClone(value);
}

/** The config whose `@type` ends with `.name` (a ConfigDump's entries), or undefined. */
export function typed(configs: readonly Json[], name: string): JsonObject | undefined {
  return configs.filter(isObject).find((config) => String(config['@type'] ?? '').endsWith(`.${name}`));
}
