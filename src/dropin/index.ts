// Drop-in mode: when called under a peer project's name (Contour, Envoy Gateway), accept that
// project's Go-style flags and exit codes, and map them onto our commands.
export { dispatch } from './dispatch.js';
