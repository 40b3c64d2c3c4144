// Reads the chart's values.yaml with its comments: which keys carry a `# --` description (the
// helm-docs convention), and whether every value is described, by itself or by a parent.
import { isMap, type Node, parseDocument } from 'yaml';

export interface ValueKey {
  /** Dotted path, e.g. shutdown.drainTimeout. */
  readonly path: string;
  /** It has its own `# --` comment. */
  readonly described: boolean;
  /** It or one of its parents has a `# --` comment. */
  readonly covered: boolean;
  /** A scalar or a list: something a user sets, not a section. */
  readonly leaf: boolean;
}

const DESCRIPTION = /(^|\n)\s*-- \S/;

/** Every key of values.yaml, depth first, in file order. */
export function valueKeys(text: string): ValueKey[] {
  const doc = parseDocument(text);
  const keys: ValueKey[] = [];
  const walk = (node: Node | null | undefined, path: readonly string[], coveredAbove: boolean): void => {
    if (!isMap(node)) return;
    node.items.forEach((pair, index) => {
      const key = pair.key as Node & { value?: unknown; commentBefore?: string | null };
      // The comment before a map's first key is kept on the map itself.
      const comment = `${index === 0 ? (node.commentBefore ?? '') : ''}\n${key.commentBefore ?? ''}`;
      const described = DESCRIPTION.test(comment);
      const keyPath = [...path, String(key.value)];
      const value = pair.value as Node | null;
      keys.push({ path: keyPath.join('.'), described, covered: coveredAbove || described, leaf: !isMap(value) });
      walk(value, keyPath, coveredAbove || described);
    });
  };
  walk(doc.contents as Node | null, [], false);
  return keys;
}
