// Set by the bundler from package.json; "dev" when the sources run unbundled (tests).
declare const __VERSION__: string | undefined;
export const VERSION: string = typeof __VERSION__ === 'string' ? __VERSION__ : '0.0.0-dev';
