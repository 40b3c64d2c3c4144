// The manager's --help lists every endpoint it serves, so an operator reading it knows what the
// port answers.
import { describe, expect, it } from 'vitest';
import { MANAGER_HELP } from '../../../src/cli/help.js';
import { DRAIN_PATH, HEALTHZ_PATH, METRICS_PATH, READY_PATH } from '../../../src/manager/server.js';

describe('shutdown-manager --help', () => {
  it.each([READY_PATH, DRAIN_PATH, HEALTHZ_PATH, METRICS_PATH])('names %s under Endpoints', (path) => {
    expect(MANAGER_HELP.after).toMatch(new RegExp(`^  GET ${path} `, 'm'));
  });
});
