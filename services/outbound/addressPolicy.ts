/**
 * Which IP addresses a caller-supplied URL may reach: public unicast only. Refused: the IANA
 * special-purpose ranges (RFC 6890 and its updates) — unspecified, loopback, private (RFC 1918),
 * CGNAT (100.64/10), link-local (cloud metadata 169.254.169.254 included), benchmarking,
 * documentation, multicast, reserved and broadcast for IPv4; for IPv6 everything outside global
 * unicast 2000::/3 (loopback, IPv4-mapped and -compatible, NAT64, unique-local fc00::/7 with AWS's
 * metadata fd00:ec2::254, link-local, multicast) plus the special blocks inside it (Teredo and
 * the other IETF assignments 2001::/23, documentation, 6to4).
 */
import { BlockList, isIP } from 'node:net';

/** Decides whether an address (an IP literal, v4 or v6) may be connected to for a caller's URL. */
export type AddressPolicy = (address: string) => boolean;

const V4_REFUSED: readonly [string, number][] = [
  ['0.0.0.0', 8], // "this network", 0.0.0.0 included
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // CGNAT (Alibaba's metadata 100.100.100.200 is in it)
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata 169.254.169.254
  ['172.16.0.0', 12],
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // TEST-NET-1
  ['192.88.99.0', 24], // 6to4 relay anycast (deprecated)
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // TEST-NET-2
  ['203.0.113.0', 24], // TEST-NET-3
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, 255.255.255.255 included
];

/** Special blocks inside global unicast 2000::/3. */
const V6_REFUSED_IN_GLOBAL: readonly [string, number][] = [
  ['2001::', 23], // IETF protocol assignments: Teredo 2001::/32, benchmarking, ORCHID
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4 (embeds any IPv4 address)
  ['3fff::', 20], // documentation (RFC 9637)
];

const refused = new BlockList();
for (const [net, prefix] of V4_REFUSED) refused.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of V6_REFUSED_IN_GLOBAL) refused.addSubnet(net, prefix, 'ipv6');
const globalUnicast = new BlockList();
globalUnicast.addSubnet('2000::', 3, 'ipv6');

/** Whether `address` is a public unicast IP (see module comment); false for anything that is not an IP literal. */
export function isPublicAddress(address: string): boolean {
  const ip = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  const family = isIP(ip);
  if (family === 4) return !refused.check(ip, 'ipv4');
  if (family === 6) {
    // Outside 2000::/3 lie ::1, ::, ::ffff:a.b.c.d (IPv4-mapped), ::a.b.c.d, 64:ff9b::/96, fc00::/7, fe80::/10, ff00::/8.
    if (!globalUnicast.check(ip, 'ipv6')) return false;
    return !refused.check(ip, 'ipv6');
  }
  return false;
}

/** The policy of the product: public unicast addresses only. */
export const publicOnly: AddressPolicy = isPublicAddress;
