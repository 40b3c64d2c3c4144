// The per-release token that proves a request comes from the pod's own preStop hook: kubelet sends
// it as a header (httpGet.httpHeaders), set from the same value as the manager's environment. No
// other client in the cluster knows it. Never logged.
import type { IncomingMessage } from 'node:http';
import { UsageError } from '../shared/errors.js';

const HOOK_TOKEN_HEADER = 'x-envoy-shutdown-token';
/** Short tokens could be guessed over the network. */
const MIN_HOOK_TOKEN_LENGTH = 16;

export type HookTokenCheck = (request: IncomingMessage) => boolean;

export function parseHookToken(token: string): string {
  if (token.length < MIN_HOOK_TOKEN_LENGTH) {
    throw new UsageError(`the hook token must be at least ${MIN_HOOK_TOKEN_LENGTH} characters long`);
  }
  return token;
}

/**
 * Compares digests in constant time, so timing reveals nothing about the token. node:crypto loads
 * here, only when a token is set: it cost every manager's start-up milliseconds.
 */
export function hookTokenCheck(token: string): HookTokenCheck {
  const { createHash, timingSafeEqual } = process.getBuiltinModule('node:crypto');
  const digest = (value: string): Buffer => createHash('sha256').update(value).digest();
  const expected = digest(token);
  return (request) => {
    const sent = request.headers[HOOK_TOKEN_HEADER];
    return typeof sent === 'string' && timingSafeEqual(digest(sent), expected);
  };
}
