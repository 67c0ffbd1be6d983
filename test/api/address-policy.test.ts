// The private-address policy of URL scans and webhooks: public addresses pass in every notation,
// private, loopback, link-local and reserved ones are refused, IPv4-mapped IPv6 included. (A rule
// for the whole ::ffff:0:0/96 once made Node's BlockList refuse every public IPv4 address.)
import { describe, expect, it } from 'vitest';
import { refusedAddress } from '../../platform/net/address-policy.ts';

describe('refusedAddress', () => {
  it('lets public addresses through', () => {
    for (const address of ['8.8.8.8', '1.1.1.1', '93.184.215.14', '::ffff:8.8.8.8', '::ffff:808:808', '2606:4700::1111', '2001:4860:4860::8888']) {
      expect(refusedAddress(address), address).toBeNull();
    }
  });

  it('refuses private, loopback, link-local and reserved ones, mapped or not', () => {
    for (const address of ['10.1.2.3', '127.0.0.1', '169.254.169.254', '172.16.5.4', '192.168.1.1', '100.64.0.1', '0.0.0.0', '203.0.113.10', '::1', '::', 'fe80::1', 'fd00::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:a9fe:a9fe', '64:ff9b::a9fe:a9fe']) {
      expect(refusedAddress(address), address).toMatch(/private, loopback, link-local or reserved/);
    }
  });
});
