// Rewrites the benchmark figures that README.md and the docs quote from bench/RESULTS.md as it is:
// node scripts/run-ts.mjs scripts/figures.ts (bench/run.ts does it after every run).
import { rewriteQuotes } from './figure-quotes.js';

const changed = rewriteQuotes();
console.log(changed.length === 0 ? 'quoted figures: up to date' : `quoted figures rewritten in ${changed.join(', ')}`);
