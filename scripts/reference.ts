// Rewrites the generated options tables of docs/reference.md from the commands' option tables:
// node scripts/run-ts.mjs scripts/reference.ts
import { readFileSync, writeFileSync } from 'node:fs';
import { generated, REFERENCE_PAGE } from './reference-tables.js';

const before = readFileSync(REFERENCE_PAGE, 'utf8');
const after = generated(before);
writeFileSync(REFERENCE_PAGE, after);
console.log(before === after ? `${REFERENCE_PAGE}: up to date` : `${REFERENCE_PAGE}: tables rewritten`);
