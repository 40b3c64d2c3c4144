// The Dockerfile, checked without a Docker engine: dockerfilelint, the image's structure (a pinned
// build stage, a FROM scratch runtime stage holding only the root filesystem the build stage lays
// out, non-root, exec-form entrypoint) and a build context that holds every path the build copies.
// test/image/ builds and runs the same runtime stage with podman.
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { posix } from 'node:path';
import { describe, expect, it } from 'vitest';
import { execForm, type Instruction, parseCopy, parseStages, type Stage } from '../support/package/dockerfile.js';
import { inContext, parseDockerignore } from '../support/package/dockerignore.js';
import { packagePaths } from '../support/package/paths.js';
import { imageScripts } from '../support/podman/scripts.js';

const { EXECUTABLE } = await packagePaths();
const scripts = await imageScripts();
const { ROOTFS, IMAGE_EXECUTABLE } = scripts.rootfs;
const stages = parseStages(readFileSync('Dockerfile', 'utf8'));
const [build, final] = stages as [Stage, Stage];
const DIGEST = /^[^@\s]+:[^@\s]+@sha256:[0-9a-f]{64}$/;

function all(stage: Stage, keyword: string): Instruction[] {
  return stage.instructions.filter((instruction) => instruction.keyword === keyword);
}

function last(stage: Stage, keyword: string): Instruction {
  const found = all(stage, keyword).at(-1);
  if (found === undefined) throw new Error(`no ${keyword} in the stage FROM ${stage.image}`);
  return found;
}

/** Files a clean checkout holds once the working tree is committed: tracked, or new and not ignored. */
function checkoutFiles(): string[] {
  return execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { encoding: 'utf8' })
    .split('\0')
    .filter((path) => path !== '');
}

describe('Dockerfile', () => {
  it('passes dockerfilelint with no issues', () => {
    const lint = spawnSync('node_modules/.bin/dockerfilelint', ['--output', 'json', 'Dockerfile'], { encoding: 'utf8' });
    const report = JSON.parse(lint.stdout) as { totalIssues: number; files: Array<{ issues: unknown[] }> };
    expect(report.files.flatMap((file) => file.issues)).toEqual([]);
    expect(report.totalIssues).toBe(0);
    expect(lint.status).toBe(0);
  });

  it('has a named build stage on Node 24 pinned by digest, and a runtime stage with no base image', () => {
    expect(stages).toHaveLength(2);
    expect(build.image).toMatch(DIGEST);
    expect(build.image).toMatch(/^node:24[.-]/);
    expect(build.name).toBeDefined();
    // Nothing unverified in what runs: the runtime stage starts empty.
    expect(final.image).toBe('scratch');
    // The executable holds an x64 Node binary: the build runs on that platform.
    expect(build.platform).toBe('linux/amd64');
    expect(all(build, 'RUN').map((run) => run.args)).toEqual(
      expect.arrayContaining([expect.stringMatching(/^npm ci\b/), 'npm run package', `node scripts/image-rootfs.mjs ${EXECUTABLE} ${ROOTFS}`]),
    );
  });

  it('runs the final stage as 65532:65532 with an exec-form entrypoint on PATH', () => {
    expect(last(final, 'USER').args).toBe('65532:65532');
    const entrypoint = execForm(last(final, 'ENTRYPOINT'));
    expect(entrypoint).toEqual([IMAGE_EXECUTABLE]);
    expect(execForm(last(final, 'CMD'))).toEqual(['shutdown-manager']);
    const path = /^PATH=(\S+)$/.exec(last(final, 'ENV').args)?.[1] ?? '';
    expect(path.split(':')).toContain(posix.dirname(entrypoint?.[0] ?? ''));
    // The runtime stage has no shell: nothing may run in it.
    expect(all(final, 'RUN')).toEqual([]);
  });

  it('copies into the runtime stage only the root filesystem the build stage lays out', () => {
    const copies = final.instructions.filter((instruction) => instruction.keyword === 'COPY' || instruction.keyword === 'ADD');
    expect(copies.map((copy) => copy.keyword)).toEqual(['COPY']);
    const copy = parseCopy(copies[0] as Instruction);
    expect(copy.from).toBe(build.name);
    const workdir = last(build, 'WORKDIR').args;
    expect(copy.sources).toEqual([`${posix.join(workdir, ROOTFS)}/`]);
    expect(copy.destination).toBe('/');
  });

  it('has the runtime stage that `npm run image` builds, word for word, behind the layout it prepares', () => {
    const dockerfile = readFileSync('Dockerfile', 'utf8');
    const local = scripts.image.localContainerfile(dockerfile);
    const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM ') + 1);
    expect(local.endsWith(runtime)).toBe(true);
    const copy = parseCopy(last(final, 'COPY'));
    expect(local).toContain(`FROM scratch AS ${copy.from}\nCOPY rootfs/ ${copy.sources[0]}\n`);
    expect(() => scripts.image.localContainerfile(dockerfile.replace(/^FROM scratch$/m, 'FROM debian:12'))).toThrow(/FROM scratch/);
  });

  it('copies from the build context only paths a clean checkout holds and .dockerignore lets through', () => {
    const files = checkoutFiles();
    const rules = parseDockerignore(readFileSync('.dockerignore', 'utf8'));
    const sources = stages
      .flatMap((stage) => all(stage, 'COPY').map(parseCopy))
      .filter((copy) => copy.from === undefined)
      .flatMap((copy) => copy.sources);
    expect(sources.length).toBeGreaterThan(0);
    for (const source of sources) {
      const held = files.filter((file) => file === source || file.startsWith(`${source.replace(/\/$/, '')}/`));
      expect(held, `${source} is not in a clean checkout`).not.toEqual([]);
      expect(
        held.every((file) => inContext(rules, file)),
        `.dockerignore keeps ${source} out of the context`,
      ).toBe(true);
    }
    expect(all(build, 'ADD')).toEqual([]);
  });

  it('copies every script that `npm run package` runs', () => {
    const scripts = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> }).scripts;
    const runs = all(build, 'RUN')
      .map((run) => run.args)
      .join(' ');
    const needed = [scripts.build, scripts.package, runs].flatMap((line) => [...(line ?? '').matchAll(/\bnode (\S+\.mjs)\b/g)].map((match) => match[1]));
    const copied = all(build, 'COPY')
      .map(parseCopy)
      .flatMap((copy) => copy.sources);
    expect(needed).toEqual(expect.arrayContaining(['scripts/package.mjs', 'scripts/image-rootfs.mjs']));
    for (const script of needed) expect(copied, `${script} is not copied into the build stage`).toContain(script);
  });

  it('keeps dependencies, build output and VCS data out of the build context', () => {
    const rules = parseDockerignore(readFileSync('.dockerignore', 'utf8'));
    for (const path of [
      'node_modules/pino/package.json',
      'dist/envoy-shutdown-manager',
      'test/.build/x.cjs',
      '.git/HEAD',
      'test/e2e/manager.test.ts',
      'test-results.json',
    ]) {
      expect(inContext(rules, path), path).toBe(false);
    }
  });
});
