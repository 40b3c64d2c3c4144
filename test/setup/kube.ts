// Global set-up of the kube project: starts building kube-apiserver and kube-controller-manager
// (minutes on a new machine) in the background and returns at once; ./wait-kube.ts waits for them.
import { type BackgroundBuild, startBuilds, stopBuilds } from '../support/background-build.js';
import { kubeBuild } from '../support/kube/binary.js';

const KUBE_BUILDS: readonly BackgroundBuild[] = [kubeBuild('kube-apiserver'), kubeBuild('kube-controller-manager')];

export default function setup(): () => void {
  startBuilds(KUBE_BUILDS, (line) => console.log(line));
  return stopBuilds;
}
