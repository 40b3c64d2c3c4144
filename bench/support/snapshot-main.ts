// The product as a startup-snapshot executable, built by the start-up bench only, to measure what
// a snapshot would save. What can be initialized without the running process (the CLI's modules,
// up to the quick `shutdown` parse) is initialized into the snapshot; node:http cannot be
// snapshotted, so the drain's modules load at run time, as they do in the real executable.
import { startupSnapshot } from 'node:v8';

void import('../../src/cli/cli.js');
startupSnapshot.setDeserializeMainFunction(() => {
  void import('../../src/main.js');
});
