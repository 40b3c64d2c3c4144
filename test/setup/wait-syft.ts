// The release test waits here for syft, which a new machine builds in the background (./release.ts)
// while the other projects' tests run: the release's own time limit starts once syft is there.
import { beforeAll } from 'vitest';
import { syftBinary } from '../support/syft.js';

beforeAll(async () => {
  await syftBinary();
}, 45 * 60_000);
