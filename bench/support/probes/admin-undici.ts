// undici's `request` sending the drain's first call to the address in argv.
import { request } from 'undici';
import { stayIdle } from './keep-alive.js';

void request(`http://${process.argv.at(-1) ?? ''}/healthcheck/fail`, { method: 'POST' })
  .then(({ body }) => body.text())
  .then(stayIdle);
