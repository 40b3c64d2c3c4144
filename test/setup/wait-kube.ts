// Each kube test file waits here for kube-apiserver and kube-controller-manager, which a new
// machine builds in the background (./kube.ts) while the other projects' tests run; the file's own
// hooks then keep their own time limits.
import { beforeAll } from 'vitest';
import { kubeBinary } from '../support/kube/binary.js';

beforeAll(async () => {
  await kubeBinary('kube-apiserver');
  await kubeBinary('kube-controller-manager');
}, 45 * 60_000);
