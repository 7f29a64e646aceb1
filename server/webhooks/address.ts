/**
 * Which IP addresses a webhook may reach. A webhook URL is typed by an admin
 * but fetched by the server from inside its network, and the delivery log
 * shows what answered: without these checks a hook is a probe of the cloud
 * metadata service, the cluster's private addresses and svc's own API.
 *
 * - `internal` (loopback, RFC 1918, unique-local fc00::/7, CGNAT 100.64/10,
 *   benchmarking 198.18/15; local-use NAT64 64:ff9b:1::/48 and Teredo
 *   2001::/32, which lead into someone's network, not the internet): refused
 *   unless `webhooks.allowPrivateTargets` is on (a relay on the host or the
 *   LAN, tests);
 * - `forbidden` (link-local 169.254/16 and fe80::/10, where cloud metadata
 *   lives; AWS's fd00:ec2::254 and Alibaba's 100.100.100.200; unspecified,
 *   multicast, reserved 240/4 and broadcast; the IETF protocol assignments
 *   192.0.0.0/24, NAT64 discovery and DS-Lite among them): refused always.
 * IPv6 forms that carry an IPv4 address (mapped ::ffff:a.b.c.d, SIIT's
 * translated ::ffff:0:a.b.c.d, compatible ::a.b.c.d, NAT64 64:ff9b::/96,
 * 6to4 2002::/16) are judged by that address; local-use NAT64 and Teredo are
 * internal at least, forbidden when the address they carry is.
 */
import { isIPv4, isIPv6 } from "node:net";

export type AddressClass = "public" | "internal" | "forbidden";

type V4Range = [base: number, bits: number, cls: Exclude<AddressClass, "public">];

const v4 = (text: string): number => text.split(".").reduce((n, part) => n * 256 + Number(part), 0);

const V4_RANGES: V4Range[] = [
  ["0.0.0.0", 8, "forbidden"], // "this network", incl. the unspecified 0.0.0.0
  ["169.254.0.0", 16, "forbidden"], // link-local: 169.254.169.254 metadata (AWS, GCP, Azure, OCI)
  ["100.100.100.200", 32, "forbidden"], // Alibaba Cloud metadata, inside CGNAT
  ["224.0.0.0", 4, "forbidden"], // multicast
  ["240.0.0.0", 4, "forbidden"], // reserved, incl. 255.255.255.255
  ["192.0.0.0", 24, "forbidden"], // IETF protocol assignments (RFC 6890): DS-Lite, NAT64 discovery 192.0.0.170
  ["127.0.0.0", 8, "internal"],
  ["10.0.0.0", 8, "internal"],
  ["172.16.0.0", 12, "internal"],
  ["192.168.0.0", 16, "internal"],
  ["100.64.0.0", 10, "internal"], // CGNAT (RFC 6598)
  ["198.18.0.0", 15, "internal"], // benchmarking (RFC 2544), used inside labs and VPNs
].map(([base, bits, cls]) => [v4(base as string), bits as number, cls as V4Range[2]]);

function classifyV4(n: number): AddressClass {
  for (const [base, bits, cls] of V4_RANGES) {
    const size = 2 ** (32 - bits);
    if (n >= base && n < base + size) return cls;
  }
  return "public";
}

/** The eight 16-bit groups of an IPv6 address (a zone id is ignored); null when it is not one. */
function groupsV6(text: string): number[] | null {
  let address = text.replace(/%.*$/, "");
  if (!isIPv6(address)) return null;
  // A dotted IPv4 tail becomes its two groups.
  address = address.replace(/(\d+\.\d+\.\d+\.\d+)$/, (dotted) => {
    const n = v4(dotted);
    return `${Math.floor(n / 65536).toString(16)}:${(n % 65536).toString(16)}`;
  });
  const parse = (s: string) => (s === "" ? [] : s.split(":").map((g) => parseInt(g, 16)));
  const halves = address.split("::");
  if (halves.length === 1) return parse(address);
  const left = parse(halves[0]!);
  const right = parse(halves[1]!);
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}

/** A class no more open than `internal`: what leads into a private network is never `public`. */
const notPublic = (cls: AddressClass): AddressClass => (cls === "public" ? "internal" : cls);

function classifyV6(g: number[]): AddressClass {
  const embedded = (hi: number, lo: number) => classifyV4(g[hi]! * 65536 + g[lo]!);
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zeros(0, 8)) return "forbidden"; // ::
  if (zeros(0, 7) && g[7] === 1) return "internal"; // ::1
  if (zeros(0, 5) && g[5] === 0xffff) return embedded(6, 7); // ::ffff:a.b.c.d
  if (zeros(0, 4) && g[4] === 0xffff && g[5] === 0) return embedded(6, 7); // SIIT ::ffff:0:a.b.c.d (RFC 7915)
  if (zeros(0, 6)) return embedded(6, 7); // ::a.b.c.d (deprecated compatible form)
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return embedded(6, 7); // NAT64
  // Local-use NAT64 (RFC 8215): the operator picks the prefix length, so the IPv4 address is read where a /96 puts it.
  if (g[0] === 0x64 && g[1] === 0xff9b && g[2] === 1) return notPublic(embedded(6, 7));
  // Teredo (RFC 4380): the client's IPv4 address is the last 32 bits, inverted.
  if (g[0] === 0x2001 && g[1] === 0) return notPublic(classifyV4((g[6]! ^ 0xffff) * 65536 + (g[7]! ^ 0xffff)));
  if (g[0] === 0x2002) return embedded(1, 2); // 6to4
  if (g[0] === 0xfd00 && g[1] === 0x0ec2 && zeros(2, 7) && g[7] === 0x254) return "forbidden"; // AWS metadata over IPv6
  if ((g[0]! & 0xffc0) === 0xfe80) return "forbidden"; // link-local
  if ((g[0]! & 0xff00) === 0xff00) return "forbidden"; // multicast
  if ((g[0]! & 0xfe00) === 0xfc00) return "internal"; // unique-local
  if ((g[0]! & 0xffc0) === 0xfec0) return "internal"; // site-local (deprecated)
  return "public";
}

/** The class of an IP address (v4 dotted, or v6 with or without brackets); null when `text` is not an IP address. */
export function classifyAddress(text: string): AddressClass | null {
  const bare = text.replace(/^\[(.*)\]$/, "$1");
  if (isIPv4(bare)) return classifyV4(v4(bare));
  const groups = groupsV6(bare);
  return groups ? classifyV6(groups) : null;
}

/** Whether an address of this class may be a target. */
export function allowedClass(cls: AddressClass, allowPrivateTargets: boolean): boolean {
  return cls === "public" || (cls === "internal" && allowPrivateTargets);
}
