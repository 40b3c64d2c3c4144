// Stats answers of real Envoy 1.40, kept verbatim in test/fixtures/envoy-answers/: what the readers are held to.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

const answer = (file: string): string => readFileSync(resolve('test/fixtures/envoy-answers', file), 'utf8');

/**
 * Part of a full /stats/prometheus answer: the admin API's own series, a per-worker copy, an IPv6
 * listener's pairing stat.
 */
export const ENVOY_ANSWER = answer('prometheus-part.txt');

/**
 * One Envoy read in full both ways, under the drain's filter for every stat, moments apart: an IPv4
 * listener holding one HTTP/1.1 connection, an IPv6 one, two named by a one-word stat_prefix.
 * Nothing but the admin API's own stats moved in between.
 */
export const FULL_PROMETHEUS = answer('full-prometheus.txt');
export const FULL_TEXT = answer('full-text.txt');
