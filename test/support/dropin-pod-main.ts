// Process entry of test/dropin/support/pod.ts, run inside the sandbox: the scenario in, the observation out.
import { runPod } from '../dropin/support/pod.js';
import { runJsonEntry } from './process-entry.js';

runJsonEntry(runPod);
