// Every error the tool raises on purpose, each with a stable `code` that tests and callers match on.

/** Process exit codes, documented in --help and docs/. */
export const ExitCode = {
  /** Every other command (the manager, status, install, a dry run) did what it was asked. */
  Success: 0,
  /** Drain finished: connections at or under the threshold after the minimum drain. */
  Drained: 0,
  /** No drain could start (the admin API refused, failed or did not answer the start calls), or Envoy exited during it. */
  EnvoyUnreachable: 1,
  /** install: the copy could not be made or does not run. */
  InstallFailed: 1,
  /** Bad flag, environment variable or configuration: nothing was sent to Envoy. */
  Usage: 2,
  /** The drain timeout ended with connections still open, or with their count unknown. */
  Timeout: 3,
  /** status, a dry run: Envoy answered, but its connection count could not be read (shutdown's 3 covers an unknown count too). */
  CountUnknown: 3,
  /** The drain ended but the ready file could not be written: Envoy's hook waits for its own timeout. */
  ReadyFileFailed: 4,
  /** Anything not foreseen above (EACCES on the ready-file directory mid-drain, a bug): the message says what. */
  Unexpected: 5,
  /** Interrupted by SIGINT/SIGTERM before the drain ended; no ready file was written. */
  Interrupted: 130,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

export type ErrorCode =
  | 'ESM_USAGE'
  | 'ESM_ADMIN_UNREACHABLE'
  | 'ESM_ADMIN_TIMEOUT'
  | 'ESM_ADMIN_STATUS'
  | 'ESM_ADMIN_BAD_RESPONSE'
  | 'ESM_READY_FILE'
  | 'ESM_ELF_UNUSABLE'
  | 'ESM_INSTALL_FAILED';

export class ShutdownManagerError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ShutdownManagerError';
  }
}

/** A bad flag, value or combination of values. Raised before any I/O. */
export class UsageError extends ShutdownManagerError {
  constructor(message: string) {
    super('ESM_USAGE', message);
    this.name = 'UsageError';
  }
}

/**
 * A call to Envoy's admin API that failed. UNREACHABLE: refused or cut without an answer (nothing
 * is there); TIMEOUT: no answer in time; STATUS: not 200; BAD_RESPONSE: an answer that cannot be used.
 */
export class AdminError extends ShutdownManagerError {
  constructor(
    code: 'ESM_ADMIN_UNREACHABLE' | 'ESM_ADMIN_TIMEOUT' | 'ESM_ADMIN_STATUS' | 'ESM_ADMIN_BAD_RESPONSE',
    message: string,
    /** A status or body that will not change on retry (a 4xx: wrong endpoint, wrong server). */
    readonly permanent: boolean,
    options?: { cause?: unknown },
  ) {
    super(code, message, options);
    this.name = 'AdminError';
  }
}

/** The copy `install` made cannot be completed or does not run: nothing was switched. */
export class InstallError extends ShutdownManagerError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('ESM_INSTALL_FAILED', message, options);
    this.name = 'InstallError';
  }
}

/**
 * An executable whose ELF headers `install` cannot use (not ELF, wrong machine, a library not
 * found). Not foreseen for the image's own executable, so it stays an unexpected failure.
 */
export class ElfError extends ShutdownManagerError {
  constructor(message: string) {
    super('ESM_ELF_UNUSABLE', message);
    this.name = 'ElfError';
  }
}

/** One line for a log field or stderr. Our own errors already say everything; others get their code. */
export function errorMessage(error: unknown): string {
  if (error instanceof ShutdownManagerError) return error.message;
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' && !error.message.includes(code) ? `${error.message} (${code})` : error.message;
  }
  return String(error);
}

/**
 * The one mapping from a failure to the exit code docs/ documents for it. Only usage errors
 * and Envoy's admin API have codes of their own; whatever else escapes is unexpected, never
 * passed off as "Envoy unreachable".
 */
export function exitCodeFor(error: unknown): ExitCode {
  if (error instanceof UsageError) return ExitCode.Usage;
  if (error instanceof AdminError) return ExitCode.EnvoyUnreachable;
  if (error instanceof InstallError) return ExitCode.InstallFailed;
  if (error instanceof ShutdownManagerError && error.code === 'ESM_READY_FILE') return ExitCode.ReadyFileFailed;
  return ExitCode.Unexpected;
}
