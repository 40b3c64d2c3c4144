// Our admin client (node:http) sending the drain's first call to the address in argv.

import { parseAdminAddress } from '../../../src/envoy/address.js';
import { createAdminClient } from '../../../src/envoy/admin-client.js';
import { stayIdle } from './keep-alive.js';

void createAdminClient({ address: parseAdminAddress(process.argv.at(-1) ?? ''), timeoutMs: 2_000 })
  .then((admin) => admin.post('/healthcheck/fail'))
  .then(stayIdle);
