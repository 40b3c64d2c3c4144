// Global set-up of the release project: starts building syft (minutes on a new machine) in the
// background and returns at once; ./wait-syft.ts waits for it.
import { startBuilds, stopBuilds } from '../support/background-build.js';
import { syftBuild } from '../support/syft.js';

export default async function setup(): Promise<() => void> {
  startBuilds([await syftBuild()], (line) => console.log(line));
  return stopBuilds;
}
