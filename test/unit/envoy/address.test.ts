import { describe, expect, it } from 'vitest';
import { formatAdminAddress, parseAdminAddress, reachesAbstractSockets } from '../../../src/envoy/address.js';
import { UsageError } from '../../../src/shared/errors.js';

describe('parseAdminAddress', () => {
  it.each([
    ['127.0.0.1:19000', { kind: 'tcp', host: '127.0.0.1', port: 19000 }],
    ['127.1.2.3:1', { kind: 'tcp', host: '127.1.2.3', port: 1 }],
    ['[::1]:19000', { kind: 'tcp', host: '::1', port: 19000 }],
    ['localhost:19000', { kind: 'tcp', host: '127.0.0.1', port: 19000 }],
    ['LOCALHOST:19000', { kind: 'tcp', host: '127.0.0.1', port: 19000 }],
    ['http://127.0.0.1:19000', { kind: 'tcp', host: '127.0.0.1', port: 19000 }],
    ['http://127.0.0.1:19000/', { kind: 'tcp', host: '127.0.0.1', port: 19000 }],
    ['http://[::1]:65535', { kind: 'tcp', host: '::1', port: 65535 }],
    ['http://localhost:19000', { kind: 'tcp', host: '127.0.0.1', port: 19000 }],
    ['[::ffff:127.0.0.1]:19000', { kind: 'tcp', host: '::ffff:127.0.0.1', port: 19000 }],
    ['unix:/var/run/envoy/admin.sock', { kind: 'unix', path: '/var/run/envoy/admin.sock' }],
    ['/admin/admin.sock', { kind: 'unix', path: '/admin/admin.sock' }],
    ['unix:@envoy-admin', { kind: 'unix', path: '\0envoy-admin' }],
  ])('%s', (text, expected) => {
    expect(parseAdminAddress(text)).toEqual(expected);
  });

  it.each([
    ['10.0.0.1:19000', /not loopback/],
    ['0.0.0.0:19000', /not loopback/],
    ['[::]:19000', /not loopback/],
    ['[2001:db8::1]:19000', /not loopback/],
    ['http://192.168.1.1:19000', /not loopback/],
    ['envoy.example.com:19000', /IP literal/],
    ['127.0.0.1', /expected host:port/],
    ['127.0.0.1:', /expected host:port/],
    ['127.0.0.1:0', /port must be 1-65535/],
    ['127.0.0.1:70000', /port must be 1-65535/],
    ['::1:19000', /brackets/],
    ['https://127.0.0.1:19000', /only http/],
    ['http://127.0.0.1:19000/admin', /only scheme, host and port/],
    ['http://127.0.0.1', /missing port/],
    ['unix:', /empty socket path/],
    ['unix:relative.sock', /must be absolute/],
    ['', /expected host:port/],
    ['[127.0.0.1]:19000', /brackets are for IPv6 addresses only/],
    ['http://127.0.0.1:19000#x', /only scheme, host and port/],
    ['http://127.0.0.1:19000/?', /only scheme, host and port/],
    ['http://user:pw@127.0.0.1:19000', /only scheme, host and port/],
    [' 127.0.0.1:19000', /white space/],
    ['127.0.0.1:19000\n', /white space/],
  ])('%j is rejected', (text, message) => {
    expect(() => parseAdminAddress(text)).toThrow(UsageError);
    expect(() => parseAdminAddress(text)).toThrow(message);
  });

  it.each(['127.0.0.1:19000', '[::1]:19000', 'unix:/a/b.sock', 'unix:@abstract'])('formats %s back', (text) => {
    expect(formatAdminAddress(parseAdminAddress(text))).toBe(text);
  });
});

describe('abstract sockets', () => {
  it.each([
    ['20.20.2', false],
    ['24.21.0', true],
    ['25.0.0', true],
  ])('Node %s reaches them: %s', (version, reaches) => {
    expect(reachesAbstractSockets(version)).toBe(reaches);
  });
});
