// Whether a path reaches the Docker build context under a .dockerignore, with Docker's rules:
// the last matching pattern wins, `!` re-includes, a pattern also matches everything under a
// directory it matches, `*` and `?` stay within one path segment, `**` spans any number.

interface Rule {
  readonly exclude: boolean;
  readonly pattern: RegExp;
}

export function parseDockerignore(text: string): Rule[] {
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const exclude = !line.startsWith('!');
      const glob = (exclude ? line : line.slice(1))
        .trim()
        .replace(/^\.?\/+/, '')
        .replace(/\/+$/, '');
      return { exclude, pattern: globToRegExp(glob) };
    });
}

/** True when `path` (relative to the context root) is sent to the builder. */
export function inContext(rules: readonly Rule[], path: string): boolean {
  const segments = path
    .replace(/^\.?\/+/, '')
    .replace(/\/+$/, '')
    .split('/');
  // The path itself and each directory above it: excluding a directory excludes what it holds.
  const candidates = segments.map((_, index) => segments.slice(0, index + 1).join('/'));
  let included = true;
  for (const rule of rules) {
    if (candidates.some((candidate) => rule.pattern.test(candidate))) included = !rule.exclude;
  }
  return included;
}

function globToRegExp(glob: string): RegExp {
  let source = '';
  for (let index = 0; index < glob.length; index++) {
    const char = glob.charAt(index);
    if (char === '*' && glob.charAt(index + 1) === '*') {
      source += '.*';
      index++;
    } else if (char === '*') source += '[^/]*';
    else if (char === '?') source += '[^/]';
    else source += char.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${source}$`);
}
