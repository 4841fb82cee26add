import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isSpecialAddress } from "../../../src/idp/cimd/address.ts";

describe("isSpecialAddress", () => {
  const special: [string, string][] = [
    ["loopback", "127.0.0.1"],
    ["loopback range", "127.1.2.3"],
    ["private 10/8", "10.1.2.3"],
    ["private 172.16/12", "172.31.0.1"],
    ["private 192.168/16", "192.168.1.1"],
    ["link-local", "169.254.169.254"],
    ["CGNAT", "100.64.0.1"],
    ["multicast", "224.0.0.251"],
    ["unspecified", "0.0.0.0"],
    ["broadcast", "255.255.255.255"],
    ["IPv6 loopback", "::1"],
    ["IPv6 unspecified", "::"],
    ["IPv6 unique local", "fd12:3456::1"],
    ["IPv6 link-local", "fe80::1"],
    ["IPv6 link-local with zone", "fe80::1%eth0"],
    ["IPv6 multicast", "ff02::1"],
    ["IPv4-mapped loopback", "::ffff:127.0.0.1"],
    ["IPv4-mapped loopback, hex", "::ffff:7f00:1"],
    ["NAT64 of a private address", "64:ff9b::a00:1"],
    ["not an address", "localhost"],
  ];
  for (const [name, address] of special)
    it(`refuses ${name} (${address})`, () => assert.ok(isSpecialAddress(address)));

  const publicAddresses = [
    "160.79.104.10",
    "8.8.8.8",
    "2606:4700::6810:84e5",
    "::ffff:8.8.8.8",
    "172.32.0.1",
  ];
  for (const address of publicAddresses) it(`allows ${address}`, () => assert.ok(!isSpecialAddress(address)));
});
