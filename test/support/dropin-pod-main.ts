// Process entry of test/support/dropin/pod.ts, run inside the sandbox: the scenario in, the observation out.
import { runPod } from './dropin/pod.js';
import { runJsonEntry } from './process-entry.js';

runJsonEntry(runPod);
