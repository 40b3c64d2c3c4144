// Small utilities every command uses: the error hierarchy and exit codes (errors.ts), the
// logger, duration and value parsers, signal capture, closed-output guard, process identity
// (pid plus start time) and the version.
export * from './errors.js';
